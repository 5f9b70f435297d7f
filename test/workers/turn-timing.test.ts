/**
 * Per-stage timing on the wire (issue #8 item 8): absent unless asked for; `deltagate.timing`
 * after each terminal event on sockets opened with `x-deltagate-timing: 1` (or `?timing=1`),
 * OpenAI's `responsesapi.websocket_timing` with `x-responsesapi-include-timing-metrics: true`,
 * `Server-Timing` on HTTP (and a trailing `deltagate.timing` SSE event on a stream), and one JSON
 * log line per turn. Values are not asserted (speed is for benchmarks), only their presence.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { testId } from "../support/test-id.ts";
import { connect, type Frame, KEY_A, TestSocket, uniqueSession, workerFetch } from "../support/ws-client.ts";

const MODEL = "deltagate-sim";
const TIMING_TYPES = new Set(["deltagate.timing", "responsesapi.websocket_timing"]);
const UPSTREAM_STAGES = ["upstream_connect", "upstream_first_event", "generation", "relay", "commit"];
const EDGE_STAGES = ["parse", "queue", "state", "render", "stages", "edge", "total"];

/** Two turns chained on `ws`; resolves with every frame once both terminal events arrived. */
async function twoTurns(ws: TestSocket): Promise<Frame[]> {
  ws.send({ type: "response.create", model: MODEL, input: "one [sim:tokens=8]" });
  const first = await ws.turn(0);
  const id = (first.at(-1) as unknown as { response: { id: string } }).response.id;
  ws.send({ type: "response.create", model: MODEL, previous_response_id: id, input: "two [sim:tokens=8]" });
  await ws.turn(1);
  return ws.frames;
}

function post(body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Response> {
  return workerFetch("/v1/responses", {
    method: "POST",
    headers: { authorization: `Bearer ${KEY_A}`, "content-type": "application/json", ...headers },
    body: JSON.stringify({ model: MODEL, input: "hi [sim:tokens=8]", ...body }),
  });
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("per-stage timing", () => {
  it("sends no timing event to a socket that did not ask", async () => {
    const ws = await connect({ session: uniqueSession("timing-off") });
    const frames = await twoTurns(ws);
    // A turn's timing would follow its terminal event at once; the second turn came after it.
    expect(frames.some((f) => TIMING_TYPES.has(f.type))).toBe(false);
    ws.close();
  });

  it("sends deltagate.timing after each terminal event when asked, with every stage", async () => {
    const ws = await connect({ session: uniqueSession("timing-on"), headers: { "x-deltagate-timing": "1" } });
    await twoTurns(ws);
    await ws.until((frames) => frames.filter((f) => f.type === "deltagate.timing").length === 2);
    const types = ws.frames.map((f) => f.type);
    const terminals = types.flatMap((t, i) => (t === "response.completed" ? [i] : []));
    const timings = types.flatMap((t, i) => (t === "deltagate.timing" ? [i] : []));
    expect(timings.map((i, n) => i > (terminals[n] ?? Infinity))).toEqual([true, true]);
    expect(types.includes("responsesapi.websocket_timing")).toBe(false);
    const [first, second] = ws.frames.filter((f) => f.type === "deltagate.timing") as unknown as Array<{
      response_id: string;
      stages: Record<string, number>;
      sequence_number?: number;
    }>;
    const completed = ws.frames.filter((f) => f.type === "response.completed") as unknown as Array<{
      response: { id: string };
    }>;
    expect(first?.response_id).toBe(completed[0]?.response.id);
    expect(second?.response_id).toBe(completed[1]?.response.id);
    expect(first?.sequence_number).toBeUndefined();
    for (const stage of [...EDGE_STAGES, ...UPSTREAM_STAGES]) {
      expect(typeof first?.stages[stage], stage).toBe("number");
    }
    expect(first?.stages.think).toBeUndefined();
    // From a completion to the next create on the same socket: the client's think time.
    expect(typeof second?.stages.think).toBe("number");
    ws.close();
  });

  it("sends OpenAI's responsesapi.websocket_timing to a socket opened with its header (Codex)", async () => {
    const ws = await connect({
      session: uniqueSession("timing-openai"),
      headers: { "x-responsesapi-include-timing-metrics": "true" },
    });
    ws.send({ type: "response.create", model: MODEL, input: "hi [sim:tokens=8]" });
    await ws.turn(0);
    await ws.until((frames) => frames.some((f) => f.type === "responsesapi.websocket_timing"));
    const event = ws.frames.find((f) => f.type === "responsesapi.websocket_timing") as unknown as {
      timing_metrics: Record<string, number>;
    };
    for (const field of [
      "responses_duration_excl_engine_and_client_tool_time_ms",
      "engine_service_total_ms",
      "engine_service_ttft_total_ms",
    ]) {
      expect(typeof event.timing_metrics[field], field).toBe("number");
    }
    expect(ws.frames.some((f) => f.type === "deltagate.timing")).toBe(false);
    ws.close();
  });

  it("accepts ?timing=1 on the upgrade and tags a named lane's timing with its stream_id", async () => {
    const res = await workerFetch(`/v1/responses?timing=1&session=${uniqueSession("timing-query")}`, {
      headers: { upgrade: "websocket", authorization: `Bearer ${KEY_A}` },
    });
    expect(res.status).toBe(101);
    res.webSocket?.accept();
    const ws = new TestSocket(res.webSocket!);
    ws.send({ type: "response.create", model: MODEL, stream_id: "lane-a", input: "hi [sim:tokens=8]" });
    await ws.turn(0, "lane-a");
    await ws.until((frames) => frames.some((f) => f.type === "deltagate.timing"));
    expect(ws.frames.find((f) => f.type === "deltagate.timing")?.stream_id).toBe("lane-a");
    ws.close();
  });

  it("adds Server-Timing to an HTTP response only when asked", async () => {
    const plain = await post({});
    expect(plain.status).toBe(200);
    expect(plain.headers.get("server-timing")).toBeNull();
    await plain.body?.cancel();

    const timed = await post({}, { "x-deltagate-timing": "1" });
    expect(timed.status).toBe(200);
    const header = timed.headers.get("server-timing") ?? "";
    for (const stage of ["parse", "edge", ...UPSTREAM_STAGES, "total"]) {
      expect(header, stage).toMatch(new RegExp(`(^|, )${stage};dur=\\d+(\\.\\d+)?(,|$)`));
    }
    expect(((await timed.json()) as { status: string }).status).toBe("completed");
  });

  it("streams Server-Timing of the edge stages, then a trailing deltagate.timing event, only when asked", async () => {
    const plain = await post({ stream: true });
    expect(plain.headers.get("server-timing")).toBeNull();
    const plainBody = await plain.text();
    expect(plainBody).not.toContain("deltagate.timing");
    expect(plainBody.trimEnd().split("\n\n").at(-1)).toContain("event: response.completed");

    const timed = await post({ stream: true }, { "x-deltagate-timing": "1" });
    // The headers leave with response.created, sent once the turn is accepted (before the upstream
    // is asked): they carry the edge stages; the trailing event carries every stage.
    expect(timed.headers.get("server-timing")).toContain("edge;dur=");
    const blocks = (await timed.text()).trimEnd().split("\n\n");
    expect(blocks.at(-2)).toContain("event: response.completed");
    expect(blocks.at(-1)).toContain("event: deltagate.timing");
    const data = JSON.parse(blocks.at(-1)?.split("data: ")[1] ?? "{}") as { stages: Record<string, number> };
    expect(typeof data.stages.commit).toBe("number");
    expect(typeof data.stages.upstream_first_event).toBe("number");
  });

  it("writes one JSON log line per turn, without content", async () => {
    const log = vi.spyOn(console, "log");
    const secret = `content-${testId()}`;
    const response = await post({ input: `${secret} [sim:tokens=8]` });
    const { id } = (await response.json()) as { id: string };
    // Written on the event loop's next turn, after the response (src/pipeline/turn-timing.ts).
    const lines = () =>
      log.mock.calls
        .map((call) => String(call[0]))
        .filter((line) => line.includes('"type":"deltagate.turn"') && line.includes(id));
    await vi.waitFor(() => expect(lines()).toHaveLength(1));
    const [line] = lines();
    expect(line).not.toContain(secret);
    const entry = JSON.parse(line ?? "{}") as { transport: string; stages: Record<string, number> };
    expect(entry.transport).toBe("http");
    expect(typeof entry.stages.total).toBe("number");
  });
});
