/**
 * Hostile suite, queued creates (issue #10 item 5): a socket that sends `response.create`s faster
 * than they finish gets at most 64 of them queued; each further one is answered with a 429
 * `websocket_queue_full` `error` event on its lane, the socket stays open, the queued ones all
 * complete in order, and once the queue drained new creates are accepted again.
 */
import { describe, expect, inject, it } from "vitest";
import { MAX_QUEUED } from "../../../src/session/lanes.ts";
import { testId } from "../../support/test-id.ts";
import { connect, uniqueSession } from "../../support/ws-client.ts";

const MODEL = "deltagate-sim";

describe("hostile: queued creates per socket", () => {
  it(`queues ${MAX_QUEUED} creates behind a running one and refuses the rest with websocket_queue_full`, async () => {
    const extra = 5;
    // The running response waits on a hold until every refusal arrived: a timed delay raced the
    // sends on a loaded machine (it finished first once, and nothing was left to refuse).
    const hold = `queue-cap-${testId()}`;
    const ws = await connect({ session: uniqueSession("queue-cap") });
    ws.send({
      type: "response.create",
      model: MODEL,
      store: false,
      input: `slow [sim:hold=${hold}] [sim:tokens=2]`,
    });
    for (let i = 0; i < MAX_QUEUED + extra; i++) {
      ws.send({ type: "response.create", model: MODEL, store: false, input: `queued ${i} [sim:tokens=2]` });
    }
    await ws.until((frames) => frames.filter((f) => f.type === "error").length === extra, 25_000);
    await fetch(`${inject("simulatorUrl")}/_sim/release?hold=${hold}`, { method: "POST" });
    await ws.until(
      (frames) => frames.filter((f) => f.type === "response.completed").length === 1 + MAX_QUEUED,
      25_000,
    );
    const errors = ws.frames.filter((f) => f.type === "error");
    expect(errors).toHaveLength(extra);
    for (const error of errors) {
      expect(error).toMatchObject({
        status: 429,
        error: { type: "rate_limit_error", code: "websocket_queue_full" },
      });
    }
    // The refusals came at once, before the running response finished.
    const firstCompleted = ws.frames.findIndex((f) => f.type === "response.completed");
    expect(ws.frames.findIndex((f) => f.type === "error")).toBeLessThan(firstCompleted);
    expect(ws.closeEvent).toBeNull();
    ws.send({ type: "response.create", model: MODEL, store: false, input: "after [sim:tokens=2]" });
    await ws.until(
      (frames) => frames.filter((f) => f.type === "response.completed").length === 2 + MAX_QUEUED,
    );
    ws.close();
  });
});
