/**
 * A response's lifecycle against `wrangler dev` (the local stack `npm start` runs), with the real
 * `openai` SDK (issue #10 items 3 and 7):
 * - keepalive: an upstream silent for longer than `KEEPALIVE_MS` (a long prefill, the simulator's
 *   `delay_ms`) keeps the socket, and `ResponsesWS` lanes and the SDK's HTTP stream finish the
 *   response without error, having seen `keepalive` events;
 * - a killed server: wrangler is killed (SIGKILL, no grace) mid-response and restarted on the same
 *   persisted state; the response is then `failed` with the text that was logged, and resuming its
 *   stream over HTTP (`GET /v1/responses/{id}?stream=true&starting_after=N`) replays the logged
 *   events and ends with a terminal event.
 * The simulator runs in this process (it outlives the killed server), decoding slowly enough that
 * the kill lands mid-response.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { ResponsesWebSocketSession } from "openai/lib/responses/responses-websocket-session";
import { ResponsesWS } from "openai/resources/responses/ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCAL_DEV_KEY, type LocalStack, startLocalStack } from "../../scripts/local-stack.ts";
import { type RunningSimulator, startSimulator } from "../../simulator/server.ts";
import { testId } from "../support/test-id.ts";

const MODEL = "deltagate-sim";
/** Keepalive interval of the stack under test, in ms. */
const KEEPALIVE_MS = 400;
/** Events the client reads before the server is killed (a 3,000-token answer has ~750). */
const KILL_AFTER = 150;

type Event = { type: string; sequence_number: number; delta?: string; response?: ResponseJson };
type ResponseJson = {
  id: string;
  status: string;
  error: { code: string } | null;
  output: Array<{ type: string; status?: string; content?: Array<{ text?: string }> }>;
};

let simulator: RunningSimulator;
let stateDir: string;
const stacks: LocalStack[] = [];

function start(): Promise<LocalStack> {
  return startLocalStack({
    port: 0,
    simulatorPort: 0,
    upstreamBaseUrl: `${simulator.url}/v1`,
    upstreamApiKey: "sim-key",
    verbose: false,
    snapshot: true,
    persistTo: stateDir,
    vars: { MODELS: MODEL, KEEPALIVE_MS: String(KEEPALIVE_MS) },
  }).then((stack) => {
    stacks.push(stack);
    return stack;
  });
}

beforeAll(async () => {
  simulator = await startSimulator({ port: 0, host: "127.0.0.1", quiet: true, decodeTokensPerSecond: 300 });
  stateDir = mkdtempSync(join(tmpdir(), "deltagate-e2e-state-"));
  await start();
});

afterAll(async () => {
  for (const stack of stacks) await stack.stop();
  await simulator?.close();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

const client = (stack: LocalStack) =>
  new OpenAI({ apiKey: LOCAL_DEV_KEY, baseURL: stack.baseUrl, maxRetries: 0 });
const auth = { authorization: `Bearer ${LOCAL_DEV_KEY}` };

/** Parses an SSE body into its events (`data:` JSON), stopping after `limit` events. */
async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<Event> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      for (let cut = buffer.indexOf("\n\n"); cut >= 0; cut = buffer.indexOf("\n\n")) {
        const data = buffer
          .slice(0, cut)
          .split("\n")
          .find((line) => line.startsWith("data: "));
        buffer = buffer.slice(cut + 2);
        if (data) yield JSON.parse(data.slice(6)) as Event;
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

const text = (events: Event[]) =>
  events
    .filter((e) => e.type === "response.output_text.delta")
    .map((e) => e.delta)
    .join("");

describe("a response's lifecycle against wrangler dev", () => {
  it("keeps a silent upstream's sockets alive with keepalives; ResponsesWS lanes and the HTTP stream finish", async () => {
    const [stack] = stacks;
    const silent = `think first [sim:delay_ms=${KEEPALIVE_MS * 4}] [sim:tokens=8]`;
    // The SDK's HTTP stream waits out its silent upstream beside the socket's lanes.
    const stream = client(stack!).responses.stream({ model: MODEL, input: silent });
    const types: string[] = [];
    stream.on("event", (event) => types.push(event.type));
    const streamed = stream.finalResponse();
    streamed.catch(() => {}); // awaited below; a failure of the socket's part must not leave it unhandled
    const ws = new ResponsesWS(client(stack!), {
      headers: { "session-id": `keepalive-${testId()}` },
    });
    const seen: Array<{ type: string; stream_id?: string }> = [];
    const errors: unknown[] = [];
    ws.on("event", (event) => seen.push(event as { type: string; stream_id?: string }));
    ws.on("error", (error) => errors.push(error));
    let closed: number | null = null;
    ws.on("close", (code) => {
      closed = code;
    });
    try {
      for await (const message of ws.stream()) if (message.type === "open") break;
      // The SDK's lane helper: one accumulator per lane, fed by the socket's events.
      const lanes = new ResponsesWebSocketSession(ws, {
        maxLanes: 4,
        maxBufferedEvents: 10_000,
        maxBufferedBytes: 16 * 1024 * 1024,
      });
      const main = lanes.lane();
      const side = lanes.lane("side");
      main.create({ model: MODEL, input: silent });
      side.create({ model: MODEL, input: silent });
      const [a, b] = await Promise.all([main.finalResponse(), side.finalResponse()]);
      expect([a.status, b.status]).toEqual(["completed", "completed"]);
      expect(a.output_text.length).toBeGreaterThan(0);
      expect(seen.filter((e) => e.type === "keepalive" && e.stream_id === undefined).length).toBeGreaterThan(
        0,
      );
      expect(seen.filter((e) => e.type === "keepalive" && e.stream_id === "side").length).toBeGreaterThan(0);
      expect(errors).toEqual([]);
      expect(closed).toBeNull();
    } finally {
      ws.close();
    }

    expect((await streamed).status).toBe("completed");
    expect(types).toContain("keepalive");
  });

  it("resumes a response cut by a killed server from its event log after a restart, ending with a terminal event", async () => {
    const first = stacks[0]!;
    const res = await fetch(`${first.baseUrl}/responses`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, input: "A long story [sim:tokens=3000]", stream: true }),
    });
    expect(res.status).toBe(200);
    const seen: Event[] = [];
    for await (const event of sseEvents(res.body!)) {
      seen.push(event);
      if (seen.length >= KILL_AFTER) break;
    }
    const id = seen[0]!.response!.id;
    // Past the log's batch interval (200 ms), so the log holds at least what was read.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await first.kill();

    const second = await start();
    const resumed: Event[] = [];
    const replay = await fetch(`${second.baseUrl}/responses/${id}?stream=true&starting_after=10`, {
      headers: auth,
    });
    expect(replay.status).toBe(200);
    for await (const event of sseEvents(replay.body!)) resumed.push(event);

    // The logged events after 10, contiguous, at least up to what this client read, then the end,
    // numbered past anything the killed server can have sent (src/engine/recovery.ts).
    const terminal = resumed.at(-1)!;
    expect(terminal.type).toBe("response.failed");
    expect(terminal.response).toMatchObject({ id, status: "failed", error: { code: "server_error" } });
    const replayed = resumed.slice(0, -1);
    expect(replayed.map((e) => e.sequence_number)).toEqual(replayed.map((_, i) => i + 11));
    expect(terminal.sequence_number).toBeGreaterThan(Math.max(KILL_AFTER, replayed.at(-1)!.sequence_number));
    const logged = [...seen.slice(0, 11), ...resumed.slice(0, -1)];
    expect(text(logged).startsWith(text(seen))).toBe(true);

    // The stored response holds the logged text, cut where the server stopped.
    const retrieved = (await (
      await fetch(`${second.baseUrl}/responses/${id}`, { headers: auth })
    ).json()) as ResponseJson;
    expect(retrieved.status).toBe("failed");
    expect(retrieved.output[0]).toMatchObject({ type: "message", status: "incomplete" });
    expect(retrieved.output[0]?.content?.[0]?.text).toBe(text(logged));
  });
});
