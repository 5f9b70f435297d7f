/**
 * The reference simulator's WebSocket mode (`GET /v1/responses` upgrade) driven by the real
 * openai-node `ResponsesWS`: every turn's events are replayed through the SDK accumulator;
 * store:false tool loops chained by previous_response_id, the connection-local cache,
 * generate:false warm-ups, cached tokens, error frames, queueing and failure directives.
 */
import type { ResponseFunctionToolCall } from "openai/resources/responses/responses";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type RunningSimulator, startSimulator } from "../../simulator/server.ts";
import { accumulateWithSdk, WsTestSession } from "../../simulator/ws-test-client.ts";

let sim: RunningSimulator;
const sessions: WsTestSession[] = [];

const tools = [
  {
    type: "function",
    name: "shell",
    parameters: {
      type: "object",
      properties: { command: { type: "array", items: { type: "string" } } },
      required: ["command"],
    },
  },
];

function open(): WsTestSession {
  const s = new WsTestSession(sim.url);
  sessions.push(s);
  return s;
}

beforeAll(async () => {
  sim = await startSimulator({ port: 0, quiet: true, decodeTokensPerSecond: 20_000 });
});
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  await sim.close();
});

describe("simulator WebSocket mode", () => {
  it("runs a 3-round tool loop with store:false, sending only the function_call_output each turn", async () => {
    const ws = open();
    let turn = await ws.turn({
      model: "deltagate-sim",
      store: false,
      tools,
      input: [{ role: "user", content: "Inspect the repo `ls -la` [sim:tools=3]" }],
    });
    const outputs: string[] = [];
    for (let round = 1; round <= 3; round++) {
      expect(turn.response?.status).toBe("completed");
      const replayed = await accumulateWithSdk(turn.events);
      expect(replayed.output).toMatchObject(turn.response?.output ?? []);
      const call = turn.response?.output[0] as ResponseFunctionToolCall;
      expect(call.type).toBe("function_call");
      expect(JSON.parse(call.arguments)).toEqual({ command: ["bash", "-lc", "ls -la"] });
      const output = `round ${round} output`;
      outputs.push(output);
      turn = await ws.turn({
        model: "deltagate-sim",
        store: false,
        tools,
        previous_response_id: turn.response?.id,
        input: [{ type: "function_call_output", call_id: call.call_id, output }],
      });
      const rec = sim.recorder.list(call.call_id).find((r) => r.transport === "ws");
      expect(rec?.inputItemCount).toBe(1);
      expect(rec?.contextItemCount).toBe(1 + round * 2);
      expect(turn.response?.usage?.input_tokens_details.cached_tokens).toBeGreaterThan(0);
    }
    expect(turn.response?.output_text ?? (await accumulateWithSdk(turn.events)).output_text).toBe(
      "Done after 3 tool call(s). Last output: round 3 output",
    );
  });

  it("reports previous_response_not_found for a store:false id on a new connection", async () => {
    const a = open();
    const first = await a.turn({ model: "m", store: false, input: "hello" });
    expect(first.response?.status).toBe("completed");
    const b = open();
    const miss = await b.turn({
      model: "m",
      store: false,
      previous_response_id: first.response?.id,
      input: "again",
    });
    expect(miss.events).toHaveLength(1);
    expect(miss.error).toEqual({
      type: "error",
      status: 400,
      error: {
        type: "invalid_request_error",
        code: "previous_response_not_found",
        message: `Previous response with id '${first.response?.id}' not found.`,
        param: "previous_response_id",
      },
    });
    // the socket stays usable after a request-level error
    const next = await b.turn({ model: "m", input: "fresh start" });
    expect(next.response?.status).toBe("completed");
    // a stored response is found from any connection
    const stored = await a.turn({ model: "m", input: "keep me" });
    const chained = await b.turn({
      model: "m",
      previous_response_id: stored.response?.id,
      input: "continue",
    });
    expect(chained.response?.status).toBe("completed");
  });

  it("keeps only the latest response in the connection cache (store:false)", async () => {
    const ws = open();
    const r1 = await ws.turn({ model: "m", store: false, input: "one" });
    await ws.turn({ model: "m", store: false, previous_response_id: r1.response?.id, input: "two" });
    const stale = await ws.turn({
      model: "m",
      store: false,
      previous_response_id: r1.response?.id,
      input: "three",
    });
    expect(stale.error?.status).toBe(400);
  });

  it("generate:false warms up without output or usage and can be chained", async () => {
    const ws = open();
    const prompt = "Long system context. ".repeat(200);
    const t0 = Date.now();
    const warm = await ws.turn({
      model: "m",
      store: false,
      generate: false,
      instructions: "be brief",
      input: prompt,
    });
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(warm.events.map((e) => e.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.completed",
    ]);
    expect(warm.response?.output).toEqual([]);
    expect(warm.response?.usage?.input_tokens).toBe(0);
    expect(warm.response?.usage?.output_tokens).toBe(0);
    const real = await ws.turn({
      model: "m",
      store: false,
      instructions: "be brief",
      previous_response_id: warm.response?.id,
      input: "now answer",
    });
    const usage = real.response?.usage;
    expect(real.response?.status).toBe("completed");
    expect(usage?.input_tokens_details.cached_tokens).toBeGreaterThan(1000);
    expect(usage?.input_tokens).toBeGreaterThan(usage?.input_tokens_details.cached_tokens ?? 0);
    expect(sim.recorder.list("now answer")[0]?.contextItemCount).toBe(2);
  });

  it("queues a second response.create until the first finishes", async () => {
    const socket = new WebSocket(`${sim.url.replace("http", "ws")}/v1/responses`);
    const frames: Array<{ type: string; sequence_number?: number; response?: { id: string } }> = [];
    socket.on("message", (d) => frames.push(JSON.parse(String(d)) as (typeof frames)[number]));
    await new Promise((resolve) => socket.once("open", resolve));
    socket.send(JSON.stringify({ type: "response.create", model: "m", input: "first [sim:tokens=300]" }));
    socket.send(JSON.stringify({ type: "response.create", model: "m", input: "second [sim:tokens=5]" }));
    const deadline = Date.now() + 5000;
    while (frames.filter((f) => f.type === "response.completed").length < 2 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
    }
    socket.close();
    const created = frames.map((f, i) => (f.type === "response.created" ? i : -1)).filter((i) => i >= 0);
    const completed = frames.map((f, i) => (f.type === "response.completed" ? i : -1)).filter((i) => i >= 0);
    expect(created).toHaveLength(2);
    expect(completed).toHaveLength(2);
    // strictly sequential: B is created only after A completed; each response numbers from 0
    expect(created[1]).toBe((completed[0] ?? -2) + 1);
    expect(frames[created[1] ?? 0]?.sequence_number).toBe(0);
    expect(frames[completed[0] ?? 0]?.response?.id).toBe(frames[0]?.response?.id);
    const deltasOfA = frames.slice(0, completed[0]).filter((f) => f.type === "response.output_text.delta");
    expect(deltasOfA.length).toBeGreaterThan(10);
  });

  it("answers malformed and unknown frames with a 400 error frame and keeps the socket open", async () => {
    const socket = new WebSocket(`${sim.url.replace("http", "ws")}/v1/responses`);
    const frames: Array<Record<string, unknown>> = [];
    socket.on("message", (d) => frames.push(JSON.parse(String(d)) as Record<string, unknown>));
    await new Promise((resolve) => socket.once("open", resolve));
    socket.send("{not json");
    socket.send(JSON.stringify({ type: "session.update" }));
    socket.send(JSON.stringify({ type: "response.create", model: "m", input: "still alive?" }));
    const deadline = Date.now() + 5000;
    while (!frames.some((f) => f.type === "response.completed") && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(frames[0]).toMatchObject({ type: "error", status: 400, error: { type: "invalid_request_error" } });
    expect(frames[1]).toMatchObject({ type: "error", status: 400, error: { code: "unknown_event_type" } });
    expect(frames[2]).toMatchObject({ type: "response.created", sequence_number: 0 });
    expect(frames.at(-1)?.type).toBe("response.completed");
    socket.close();
  });

  it("fail=before sends a 500 error frame; the socket stays open", async () => {
    const ws = open();
    const failed = await ws.turn({ model: "m", input: "x [sim:fail=before]" });
    expect(failed.error).toMatchObject({
      status: 500,
      error: { type: "server_error", code: "server_error" },
    });
    const limited = await ws.turn({ model: "m", input: "x [sim:fail=status:429]" });
    expect(limited.error?.status).toBe(429);
    expect((await ws.turn({ model: "m", input: "ok" })).response?.status).toBe("completed");
  });

  it("fail=midstream closes with 1011 after a few deltas; ws_drop=1 drops before any event", async () => {
    const ws = open();
    const mid = await ws.turn({ model: "m", input: "x [sim:fail=midstream] [sim:tokens=100]" });
    expect(mid.closeCode).toBe(1011);
    expect(mid.events.filter((e) => e.type === "response.output_text.delta")).toHaveLength(3);
    expect(mid.events.some((e) => e.type === "response.completed")).toBe(false);

    const dropper = open();
    const dropped = await dropper.turn({ model: "m", input: "x [sim:ws_drop=1]" });
    expect(dropped.events).toHaveLength(0);
    expect(dropped.closeCode).toBe(1006);
    const rec = await sim.recorder.waitFor((r) => r.simulatedFailure === "ws_drop");
    expect(rec.transport).toBe("ws");
  });

  it("records aborted:true when the client closes the socket mid-response", async () => {
    const ws = open();
    ws.ws.send({ type: "response.create", model: "m", input: "abort me [sim:tokens=20000]" } as never);
    await new Promise<void>((resolve) => ws.ws.on("response.output_text.delta", () => resolve()));
    await ws.close();
    const rec = await sim.recorder.waitFor((r) => r.aborted && r.rawText.includes("abort me"));
    expect(rec.transport).toBe("ws");
    expect(rec.status).toBeNull();
  });
});
