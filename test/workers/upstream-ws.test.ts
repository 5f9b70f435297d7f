/**
 * The Responses WebSocket-mode upstream adapter (issue #4 §1, first bullet) through the real
 * Worker and session Durable Object, against the simulator's WebSocket mode (models `sim-ws*`
 * are routed to it in vitest.config.ts): one warm upstream socket per session, delta-only turns
 * on top of the upstream's own response ids, `generate:false` warm-ups, error frames, mid-stream
 * loss, the connection limit, and cancellation. What went upstream is read from the simulator's
 * recorder (`transport: "ws"`, frame `bytes`, `previousResponseId`, `contextItemCount`).
 */
import { describe, expect, inject, it } from "vitest";
import type { StoredItem } from "../../src/protocol/items.ts";
import { ResponsesWsUpstream, ROTATE_AFTER_MS } from "../../src/upstream/responses-ws/adapter.ts";
import type { UpstreamRequest } from "../../src/upstream/upstream.ts";
import { countRows, sessionStub } from "../support/session-stub.ts";
import { testId } from "../support/test-id.ts";
import { connect, uniqueSession, validateWithSdk } from "../support/ws-client.ts";
import {
  connections,
  entriesOf,
  jsonBytes,
  recorded,
  responseOf,
  runToolLoop,
  SHELL_TOOL,
} from "./upstream-ws-loop.ts";

const MODEL = "sim-ws";
/** Upper bound for a delta turn's frame: settings + tools + one tool output + ids, in bytes. */
const DELTA_FRAME_BOUND = 1200;

describe("responses-ws upstream", () => {
  it("sends a 30-turn tool loop as deltas on one warm socket: bytes per turn stay flat as history grows", async () => {
    const simulatorUrl = inject("simulatorUrl");
    const marker = `delta-${testId()}`;
    const session = uniqueSession("ws-delta");
    const ws = await connect({ session });
    const loop = await runToolLoop(ws, {
      model: MODEL,
      prompt: `${marker}: list files with \`ls\` [sim:tools=29]`,
      rounds: 29,
      store: false,
      marker,
    });
    expect(loop.responses).toHaveLength(30);
    const records = await recorded(simulatorUrl, marker);
    expect(records).toHaveLength(30);
    expect(records.every((r) => r.transport === "ws" && r.status === 200)).toBe(true);
    // One warm upstream socket carried the whole loop, keyed to the session for prefix caching.
    expect(new Set(records.map((r) => r.connectionId)).size).toBe(1);
    const sessionKey = sessionStub("tenant-a", session).id.toString();
    expect(
      records.every((r) => (r.body as { prompt_cache_key?: string }).prompt_cache_key === sessionKey),
    ).toBe(true);
    // The upstream always saw the whole context: 1 user message + 2 items per tool round.
    expect(records.map((r) => r.contextItemCount)).toEqual(records.map((_, k) => 2 * k + 1));
    const [first, ...deltas] = records;
    expect(first?.previousResponseId).toBeNull();
    expect(first?.body.input).toHaveLength(1);
    for (const delta of deltas) {
      expect(delta.previousResponseId).toMatch(/^resp_/);
      expect(entriesOf(delta.body.input).map((e) => e.type)).toEqual(["function_call_output"]);
      expect(delta.bytes).toBeLessThan(DELTA_FRAME_BOUND);
    }
    // Flat: the 30th turn's frame is no bigger than the 2nd's (beyond id/text jitter) …
    const second = deltas[0]?.bytes ?? 0;
    const last = deltas.at(-1)?.bytes ?? 0;
    expect(last).toBeLessThan(second + 64);
    // … while the full context of that turn would be several times the bound.
    const fullContextBytes = jsonBytes(loop.contextItems);
    expect(fullContextBytes).toBeGreaterThan(4 * DELTA_FRAME_BOUND);
    expect(last * 4).toBeLessThan(fullContextBytes);
    ws.close();
  }, 60_000);

  it("pre-loads a generate:false warm-up upstream so the first real turn already goes delta-only", async () => {
    const simulatorUrl = inject("simulatorUrl");
    const marker = `warm-${testId()}`;
    const ws = await connect({ session: uniqueSession("ws-warm") });
    const instructions = `You are a careful agent. ${"Follow the house rules. ".repeat(40)}`;
    ws.send({
      type: "response.create",
      model: MODEL,
      store: false,
      generate: false,
      instructions,
      tools: [SHELL_TOOL],
      input: `${marker} session context`,
    });
    const warm = await ws.turn(0);
    await validateWithSdk(warm);
    expect(responseOf(warm).output).toEqual([]);
    const loop = await runToolLoop(ws, {
      model: MODEL,
      prompt: `${marker}: run \`ls\` [sim:tools=2]`,
      rounds: 2,
      store: false,
      marker,
      instructions,
      previousResponseId: responseOf(warm).id,
      firstTurnIndex: 1,
    });
    expect(loop.responses).toHaveLength(3);
    const records = await recorded(simulatorUrl, marker);
    expect(
      records.map((r) => [r.body.generate ?? true, r.contextItemCount, r.previousResponseId !== null]),
    ).toEqual([
      [false, 1, false], // the warm-up: full context, no output wanted
      [true, 2, true], // first real turn: only the user message, on top of the warm-up
      [true, 4, true],
      [true, 6, true],
    ]);
    expect(records[0]?.body).toMatchObject({ generate: false, instructions, tools: [SHELL_TOOL] });
    // The first real turn carries one item, not the warm-up's context again.
    expect(records[1]?.body.input).toHaveLength(1);
    expect(new Set(records.map((r) => r.connectionId)).size).toBe(1);
    ws.close();
  });

  it("sends a fork to an older response as the full context (the upstream only keeps the latest)", async () => {
    const simulatorUrl = inject("simulatorUrl");
    const marker = `fork-${testId()}`;
    const ws = await connect({ session: uniqueSession("ws-fork") });
    const create = (input: string, previous: string | null) =>
      ws.send({ type: "response.create", model: MODEL, store: false, previous_response_id: previous, input });
    create(`${marker} root [sim:tokens=4]`, null);
    const root = responseOf(await ws.turn(0)).id;
    create(`${marker} left [sim:tokens=4]`, root);
    expect((await ws.turn(1)).at(-1)?.type).toBe("response.completed");
    create(`${marker} right [sim:tokens=4]`, root);
    const right = await ws.turn(2);
    expect(right.at(-1)?.type).toBe("response.completed");
    await validateWithSdk(right);
    const records = await recorded(simulatorUrl, marker);
    expect(
      records.map((r) => [r.previousResponseId !== null, r.contextItemCount, r.body.input?.length]),
    ).toEqual([
      [false, 1, 1],
      [true, 3, 1], // continues the latest response: delta
      [false, 3, 3], // forks from an older one: full context
    ]);
    ws.close();
  });

  it("replaces a socket at the connection limit and resends the full context, unseen by the client", async () => {
    const simulatorUrl = inject("simulatorUrl");
    const marker = `limit-${testId()}`;
    const ws = await connect({ session: uniqueSession("ws-limit") });
    const loop = await runToolLoop(ws, {
      model: MODEL,
      prompt: `${marker}: run \`ls\` [sim:tools=5] [sim:ws_limit=2]`,
      rounds: 5,
      store: false,
      marker,
    });
    expect(ws.frames.some((f) => f.type === "error")).toBe(false);
    expect(loop.responses).toHaveLength(6);
    const records = await recorded(simulatorUrl, marker);
    const limited = records.filter((r) => r.simulatedFailure === "ws_limit");
    expect(limited.length).toBeGreaterThanOrEqual(2);
    for (const hit of limited) {
      const resend = records[records.indexOf(hit) + 1];
      expect(resend?.previousResponseId).toBeNull();
      expect(resend?.contextItemCount).toBe(hit.contextItemCount);
      expect(resend?.body.input).toHaveLength(hit.contextItemCount ?? -1);
      expect(resend?.connectionId).not.toBe(hit.connectionId);
    }
    const used = await connections(
      simulatorUrl,
      records.map((r) => r.connectionId ?? 0),
    );
    expect(used.filter((c) => c.closedBy === "server").length).toBe(limited.length);
    ws.close();
  });

  it("reports an upstream error frame before the first event as response.failed, and the socket stays usable", async () => {
    const simulatorUrl = inject("simulatorUrl");
    const marker = `err-${testId()}`;
    const session = uniqueSession("ws-error");
    const ws = await connect({ session });
    ws.send({ type: "response.create", model: MODEL, input: `${marker} slow down [sim:fail=status:429]` });
    const limited = await ws.turn(0);
    expect(limited.map((f) => f.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.failed",
    ]);
    expect(responseOf(limited).error).toMatchObject({ code: "rate_limit_exceeded" });
    ws.send({ type: "response.create", model: MODEL, input: `${marker} broken [sim:fail=before]` });
    const failed = await ws.turn(1);
    expect(responseOf(failed).error).toMatchObject({ code: "server_error" });
    expect(await countRows("tenant-a", session, "responses", "status = 'failed'")).toBe(2);
    ws.send({ type: "response.create", model: MODEL, input: `${marker} fine now [sim:tokens=5]` });
    const ok = await ws.turn(2);
    expect(ok.at(-1)?.type).toBe("response.completed");
    await validateWithSdk(ok);
    const records = await recorded(simulatorUrl, marker);
    // Error frames leave the socket usable: every request (retries by fallback.ts included) went
    // over the same warm socket.
    expect([...new Set(records.map((r) => r.status))]).toEqual([429, 500, 200]);
    expect(new Set(records.map((r) => r.connectionId)).size).toBe(1);
    ws.close();
  });

  it("fails the response when the socket drops after output was forwarded, then recovers on the next turn", async () => {
    const simulatorUrl = inject("simulatorUrl");
    const marker = `mid-${testId()}`;
    const ws = await connect({ session: uniqueSession("ws-mid") });
    ws.send({
      type: "response.create",
      model: MODEL,
      input: `${marker} [sim:fail=midstream] [sim:tokens=80]`,
    });
    const frames = await ws.turn(0);
    expect(frames[0]?.type).toBe("response.created");
    expect(frames.some((f) => f.type === "response.output_text.delta")).toBe(true);
    const failed = responseOf(frames);
    expect(frames.at(-1)?.type).toBe("response.failed");
    expect(failed.error?.code).toBe("upstream_error");
    expect(frames.map((f) => f.sequence_number)).toEqual(frames.map((_, i) => i));
    // Chaining on the failed response starts over with the full context on a new socket.
    ws.send({
      type: "response.create",
      model: MODEL,
      previous_response_id: failed.id,
      input: `${marker} again [sim:tokens=5]`,
    });
    const next = await ws.turn(1);
    expect(next.at(-1)?.type).toBe("response.completed");
    await validateWithSdk(next);
    const records = await recorded(simulatorUrl, marker);
    expect(records).toHaveLength(2);
    expect(records[1]?.previousResponseId).toBeNull();
    expect(records[1]?.connectionId).not.toBe(records[0]?.connectionId);
    ws.close();
  });

  it("closes the upstream socket when a store:false client goes away mid-turn", async () => {
    const simulatorUrl = inject("simulatorUrl");
    const marker = `abort-${testId()}`;
    const session = uniqueSession("ws-abort");
    const ws = await connect({ session });
    ws.send({
      type: "response.create",
      model: MODEL,
      store: false,
      input: `${marker} long [sim:tokens=3000]`,
    });
    await ws.until((f) => f.some((x) => x.type === "response.output_text.delta"));
    ws.close();
    await expect
      .poll(async () => (await recorded(simulatorUrl, marker))[0]?.connectionId ?? null)
      .not.toBeNull();
    const [record] = await recorded(simulatorUrl, marker);
    await expect
      .poll(async () => (await connections(simulatorUrl, [record?.connectionId ?? 0]))[0]?.closedBy, {
        timeout: 10_000,
      })
      .toBe("client");
    await expect.poll(async () => (await recorded(simulatorUrl, marker))[0]?.aborted).toBe(true);
    await expect.poll(() => countRows("tenant-a", session, "responses"), { timeout: 10_000 }).toBe(0);
  });
});

describe("responses-ws adapter (direct, against the simulator)", () => {
  it("replaces the socket before the 60-minute limit and sends the full context on the new one", async () => {
    const simulatorUrl = inject("simulatorUrl");
    const marker = `rotate-${testId()}`;
    let clock = 1_000_000;
    const upstream = new ResponsesWsUpstream({
      baseUrl: `${simulatorUrl}/v1`,
      apiKey: "sim-test-key",
      idleMs: 60_000,
      now: () => clock,
    });
    const user = (id: string, text: string): StoredItem => ({
      id,
      type: "message",
      role: "user",
      content: [{ type: "input_text", text }],
    });
    const drain = async (request: UpstreamRequest) => {
      const stream = await upstream.open(request, new AbortController().signal);
      const events = [stream.first];
      for await (const event of stream.rest) events.push(event);
      return events;
    };
    const first = user("msg_a", `${marker} one [sim:tokens=4]`);
    const base = { model: "sim-ws", settings: {}, sessionKey: "rotation-test" };
    const one = await drain({
      ...base,
      input: [first],
      newInput: [first],
      previousResponseId: null,
      responseId: "r1",
    });
    expect(one.at(-1)?.type).toBe("response.completed");
    const outputs = (one.at(-1)?.response as { output: StoredItem[] } | undefined)?.output ?? [];
    const second = user("msg_b", `${marker} two [sim:tokens=4]`);
    const request = (responseId: string, parent: string): UpstreamRequest => ({
      ...base,
      input: [first, ...outputs, second],
      newInput: [second],
      previousResponseId: parent,
      responseId,
    });
    expect((await drain(request("r2", "r1"))).at(-1)?.type).toBe("response.completed");
    clock += ROTATE_AFTER_MS; // the socket is now as old as the rotation threshold
    expect((await drain(request("r3", "r2"))).at(-1)?.type).toBe("response.completed");
    const records = await recorded(simulatorUrl, marker);
    expect(records.map((r) => [r.previousResponseId !== null, r.contextItemCount])).toEqual([
      [false, 1],
      [true, 3],
      [false, 3], // new socket: the upstream has no chain there, so the full context goes
    ]);
    expect(records[2]?.connectionId).not.toBe(records[1]?.connectionId);
    await expect
      .poll(async () => (await connections(simulatorUrl, [records[0]?.connectionId ?? 0]))[0]?.closeReason)
      .toBe("rotating before the connection limit");
  });
});
