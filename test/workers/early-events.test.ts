/**
 * When a turn is announced, and how a failure before the upstream's first token is reported
 * (issue #11 item 5): `response.created` and `response.in_progress` go out as soon as the turn is
 * accepted, while the upstream is still silent (a long prefill, simulated with `delay_ms`);
 * retries and fallback before the first token stay invisible; an upstream failure after that
 * point ends the stream with `response.failed` (stored as failed), as OpenAI streams report a
 * failure after `response.created`; a non-streaming HTTP request still gets the upstream's status.
 * A request Deltagate itself rejects (validation, a stage) is still a request-level `error`.
 */
import OpenAI from "openai";
import { describe, expect, inject, it } from "vitest";
import { sdkClient } from "../support/sdk-client.ts";
import { countRows } from "../support/session-stub.ts";
import { testId } from "../support/test-id.ts";
import {
  connect,
  type Frame,
  simulatorRequests,
  uniqueSession,
  validateWithSdk,
} from "../support/ws-client.ts";

const MODEL = "deltagate-sim";

type Failed = {
  id: string;
  status: string;
  error: { code: string; message: string } | null;
  output: unknown[];
};
const responseOf = (frame: Frame | undefined) => (frame as unknown as { response: Failed }).response;

describe("early events", () => {
  it("sends response.created while the upstream is still prefilling", async () => {
    const ws = await connect({ session: uniqueSession("early-created") });
    const sent = Date.now();
    ws.send({
      type: "response.create",
      model: MODEL,
      input: "slow start [sim:delay_ms=5000] [sim:tokens=5]",
    });
    await ws.until((frames) => frames.some((f) => f.type === "response.in_progress"));
    // The upstream sends nothing for 5 s; the turn is announced at once (a generous bound).
    expect(Date.now() - sent).toBeLessThan(1_000);
    expect(ws.frames.map((f) => f.type)).toEqual(["response.created", "response.in_progress"]);
    const frames = await ws.turn(0);
    expect(frames.at(-1)?.type).toBe("response.completed");
    await validateWithSdk(frames);
    ws.close();
  });

  it("reports an upstream failure before the first token as response.failed, stored as failed", async () => {
    const session = uniqueSession("early-failed");
    const ws = await connect({ session });
    ws.send({ type: "response.create", model: MODEL, input: "boom [sim:fail=before]" });
    const frames = await ws.turn(0);
    expect(frames.map((f) => f.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.failed",
    ]);
    await validateWithSdk(frames);
    const failed = responseOf(frames.at(-1));
    expect(failed.status).toBe("failed");
    expect(failed.error).toEqual({ code: "server_error", message: "Simulated upstream failure." });
    expect(failed.output).toEqual([]);
    expect(
      await countRows("tenant-a", session, "responses", `id = '${failed.id}' AND status = 'failed'`),
    ).toBe(1);
    // The socket carries on.
    ws.send({ type: "response.create", model: MODEL, input: "fine [sim:tokens=5]" });
    expect((await ws.turn(1)).at(-1)?.type).toBe("response.completed");
    ws.close();
  });

  it("keeps retries invisible: one created, one terminal event for five upstream attempts", async () => {
    const marker = `early-retry-${testId()}`;
    const ws = await connect({ session: uniqueSession("early-retry") });
    ws.send({ type: "response.create", model: "sim-retry-model", input: `${marker} [sim:fail=status:429]` });
    const frames = await ws.turn(0);
    expect(frames.map((f) => f.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.failed",
    ]);
    expect(responseOf(frames.at(-1)).error?.code).toBe("rate_limit_exceeded");
    expect(await simulatorRequests(inject("simulatorUrl"), marker)).toHaveLength(5);
    ws.close();
  });

  it("over HTTP: a stream ends with response.failed; a non-streaming request gets the upstream's status", async () => {
    const client = sdkClient();
    const stream = await client.responses.create({
      model: MODEL,
      input: "y [sim:fail=before]",
      stream: true,
    });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toEqual(["response.created", "response.in_progress", "response.failed"]);
    await expect(
      client.responses.create({ model: MODEL, input: "x [sim:fail=status:429]" }),
    ).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    await expect(
      client.responses.create({ model: MODEL, input: "x [sim:fail=before]" }),
    ).rejects.toBeInstanceOf(OpenAI.InternalServerError);
  });

  it("still rejects what Deltagate itself refuses with a request-level error and stores nothing", async () => {
    const session = uniqueSession("early-rejected");
    const ws = await connect({ session });
    ws.send({ type: "response.create", model: MODEL, previous_response_id: "resp_unknown", input: "x" });
    const [error] = await ws.turn(0);
    expect(error).toMatchObject({
      type: "error",
      status: 400,
      error: { code: "previous_response_not_found" },
    });
    expect(await countRows("tenant-a", session, "responses")).toBe(0);
    ws.close();
  });
});
