/**
 * Lanes (issue #2 §3, brief §1.4): the default lane queues creates and runs them in order; named
 * `stream_id` lanes run concurrently and every event carries its `stream_id`; bad or excess
 * stream ids get `invalid_stream_id` / `websocket_stream_limit_reached`.
 */
import { describe, expect, inject, it } from "vitest";
import { countRows } from "../support/session-stub.ts";
import { connect, type Frame, uniqueSession, validateWithSdk } from "../support/ws-client.ts";

const MODEL = "deltagate-sim";
const idOf = (frames: Frame[]) => (frames.at(-1) as unknown as { response: { id: string } }).response.id;

describe("lanes", () => {
  it("queues creates on the default lane and runs them one at a time, in order", async () => {
    const ws = await connect({ session: uniqueSession("queue") });
    // The second create chains on the first before the first has finished: it must wait for it.
    ws.send({ type: "response.create", model: MODEL, input: "first [sim:tokens=60]" });
    ws.send({ type: "response.create", model: MODEL, input: "second [sim:tokens=5]" });
    ws.send({ type: "response.create", model: MODEL, input: "third [sim:tokens=5]" });
    await ws.turn(2);
    const lifecycle = ws.frames
      .filter((f) => f.type === "response.created" || f.type === "response.completed")
      .map((f) => f.type);
    expect(lifecycle).toEqual([
      "response.created",
      "response.completed",
      "response.created",
      "response.completed",
      "response.created",
      "response.completed",
    ]);
    for (let n = 0; n < 3; n++) await validateWithSdk(await ws.turn(n));
    ws.close();
  });

  it("runs a queued continuation of the in-flight response once it has completed", async () => {
    const ws = await connect({ session: uniqueSession("queue-chain") });
    ws.send({ type: "response.create", model: MODEL, input: "first [sim:tokens=40]" });
    await ws.until((f) => f.some((x) => x.type === "response.created"));
    const firstId = (ws.frames[0] as unknown as { response: { id: string } }).response.id;
    ws.send({ type: "response.create", model: MODEL, previous_response_id: firstId, input: "second" });
    const second = await ws.turn(1);
    expect(second.at(-1)?.type).toBe("response.completed");
    expect(
      (second.at(-1) as unknown as { response: { previous_response_id: string } }).response
        .previous_response_id,
    ).toBe(firstId);
    ws.close();
  });

  it("runs named lanes concurrently and tags every event with its stream_id", async () => {
    const ws = await connect({ session: uniqueSession("lanes") });
    // The simulator holds the slow lane's terminal event until the fast lane has completed.
    const hold = uniqueSession("lanes-hold");
    ws.send({
      type: "response.create",
      model: MODEL,
      stream_id: "slow",
      input: `slow lane [sim:hold=${hold}]`,
    });
    ws.send({ type: "response.create", model: MODEL, stream_id: "fast", input: "fast lane [sim:tokens=5]" });
    const fast = await ws.turn(0, "fast");
    await fetch(`${inject("simulatorUrl")}/_sim/release?hold=${hold}`, { method: "POST" });
    const slow = await ws.turn(0, "slow");
    // The fast lane finished while the slow lane was still streaming.
    const fastDone = ws.frames.indexOf(fast.at(-1)!);
    const slowDone = ws.frames.indexOf(slow.at(-1)!);
    expect(fastDone).toBeLessThan(slowDone);
    expect(ws.frames.every((f) => f.stream_id === "slow" || f.stream_id === "fast")).toBe(true);
    const strip = (frames: Frame[]) => frames.map(({ stream_id: _s, ...rest }) => rest as Frame);
    await validateWithSdk(strip(fast));
    await validateWithSdk(strip(slow));
    // A lane continues its own chain.
    ws.send({
      type: "response.create",
      model: MODEL,
      stream_id: "fast",
      previous_response_id: idOf(fast),
      input: "more",
    });
    expect((await ws.turn(1, "fast")).at(-1)?.type).toBe("response.completed");
    ws.close();
  });

  it("rejects an invalid stream_id on its lane, with the stream_id", async () => {
    const ws = await connect({ session: uniqueSession("bad-lane") });
    ws.send({ type: "response.create", model: MODEL, stream_id: "has space", input: "x" });
    await ws.until((f) => f.length > 0);
    expect(ws.frames[0]).toMatchObject({
      type: "error",
      status: 400,
      stream_id: "has space",
      error: { code: "invalid_stream_id", param: "stream_id" },
    });
    ws.close();
  });

  it("limits a connection to 32 distinct stream_ids", async () => {
    const ws = await connect({ session: uniqueSession("lane-limit") });
    for (let i = 0; i < 32; i++) {
      ws.send({ type: "response.create", model: MODEL, stream_id: `lane-${i}`, generate: false, input: "x" });
    }
    ws.send({ type: "response.create", model: MODEL, stream_id: "lane-32", generate: false, input: "x" });
    await ws.until((f) => f.some((x) => x.type === "error"));
    expect(ws.frames.find((f) => f.type === "error")).toMatchObject({
      status: 400,
      stream_id: "lane-32",
      error: { code: "websocket_stream_limit_reached" },
    });
    // An existing lane is still usable.
    ws.send({ type: "response.create", model: MODEL, stream_id: "lane-0", generate: false, input: "y" });
    await ws.turn(1, "lane-0");
    ws.close();
  });

  it("drops creates still queued when the socket closes; the running store:true one finishes", async () => {
    const session = uniqueSession("queue-close");
    const hold = uniqueSession("queue-close-hold");
    // A socket with a store:false grace window (src/http/client-options.ts), and a store:false
    // response of it: its scope is released (its grace window starts) when the Durable Object
    // handles the close.
    const ws = await connect({ session, headers: { "x-deltagate-store-false-grace": "300000" } });
    ws.send({ type: "response.create", model: MODEL, store: false, generate: false, input: "scope" });
    // The simulator holds the running response's terminal event until the test releases it, so the
    // close is handled while it provably still runs. (Racing a short response against the close
    // made queued creates start, legitimately, whenever the response won: "expected 2 to be 1".)
    ws.send({ type: "response.create", model: MODEL, input: `running [sim:hold=${hold}]` });
    ws.send({ type: "response.create", model: MODEL, input: "queued one" });
    ws.send({ type: "response.create", model: MODEL, input: "queued two" });
    await ws.until((f) => f.some((x) => x.type === "response.output_text.delta"));
    expect(await countRows("tenant-a", session, "responses", "store = 0")).toBe(1);
    ws.close();
    await expect.poll(() => countRows("tenant-a", session, "released_scopes"), { timeout: 10_000 }).toBe(1);
    await fetch(`${inject("simulatorUrl")}/_sim/release?hold=${hold}`, { method: "POST" });
    await expect
      // store = 1: the store:false warm-up is completed too, and stays until its grace window ends.
      .poll(() => countRows("tenant-a", session, "responses", "status = 'completed' AND store = 1"), {
        timeout: 10_000,
      })
      .toBe(1);
    // Give a wrongly started queued create time to show up, then check none did.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await countRows("tenant-a", session, "responses", "store = 1")).toBe(1);
  });
});
