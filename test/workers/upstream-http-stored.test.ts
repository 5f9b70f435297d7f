/**
 * The Responses HTTP adapter in stored mode (issue #4 §1: "delta with upstream
 * previous_response_id when the upstream stores, configurable"): the `sim-stored*` route sets
 * `upstream_store: true` (vitest.config.ts). A chained turn goes upstream as its own input plus the
 * upstream's previous response id; a fork, or an adapter that lost its memory (the Durable Object
 * was evicted), sends the full context instead — the upstream always sees the right history.
 */
import { evictDurableObject } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { sessionStub } from "../support/session-stub.ts";
import { testId } from "../support/test-id.ts";
import {
  connect,
  type Frame,
  simulatorRequests,
  uniqueSession,
  validateWithSdk,
} from "../support/ws-client.ts";

const MODEL = "sim-stored";
const idOf = (frames: Frame[]) => (frames.at(-1) as unknown as { response: { id: string } }).response.id;

describe("Responses HTTP upstream in stored mode", () => {
  it("sends chained turns as the delta plus the upstream's previous_response_id", async () => {
    const marker = `stored-${testId()}`;
    const session = uniqueSession("stored");
    const ws = await connect({ session });
    let previous: string | null = null;
    for (let turn = 0; turn < 3; turn++) {
      ws.send({
        type: "response.create",
        model: MODEL,
        input: `${marker} turn ${turn}`,
        ...(previous ? { previous_response_id: previous } : {}),
      });
      const frames = await ws.turn(turn);
      await validateWithSdk(frames);
      previous = idOf(frames);
    }
    const recorded = await simulatorRequests(inject("simulatorUrl"), marker);
    expect(recorded.map((r) => r.inputItemCount)).toEqual([1, 1, 1]); // only the delta travels
    expect(recorded.map((r) => r.contextItemCount)).toEqual([1, 3, 5]); // the upstream has it all
    expect(recorded.map((r) => typeof r.previousResponseId)).toEqual(["object", "string", "string"]);
    ws.close();
  });

  it("falls back to the full context after the Durable Object forgot the upstream ids, and on a fork", async () => {
    const marker = `stored-evict-${testId()}`;
    const session = uniqueSession("stored-evict");
    const ws = await connect({ session });
    ws.send({ type: "response.create", model: MODEL, input: `${marker} root` });
    const root = idOf(await ws.turn(0));
    ws.send({ type: "response.create", model: MODEL, previous_response_id: root, input: `${marker} second` });
    const second = idOf(await ws.turn(1));
    await evictDurableObject(sessionStub("tenant-a", session));
    ws.send({
      type: "response.create",
      model: MODEL,
      previous_response_id: second,
      input: `${marker} after eviction`,
    });
    await ws.turn(2);
    ws.send({ type: "response.create", model: MODEL, previous_response_id: root, input: `${marker} fork` });
    await ws.turn(3);
    const recorded = await simulatorRequests(inject("simulatorUrl"), marker);
    const byText = (text: string) => recorded.find((r) => JSON.stringify(r.body).includes(text))!;
    expect(byText("second")).toMatchObject({ inputItemCount: 1, contextItemCount: 3 });
    expect(typeof byText("second").previousResponseId).toBe("string");
    // After eviction: full context (the root's and second turn's items travel again).
    expect(byText("after eviction")).toMatchObject({
      previousResponseId: null,
      inputItemCount: 5,
      contextItemCount: 5,
    });
    // A fork to the root after `second` was sent: the adapter knows root's upstream id only if it
    // sent root in this instance; it did not (evicted), so the full context goes.
    expect(byText("fork")).toMatchObject({
      previousResponseId: null,
      inputItemCount: 3,
      contextItemCount: 3,
    });
    ws.close();
  });
});
