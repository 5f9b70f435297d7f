/**
 * Keepalive (issue #10 item 7): while a response is in flight and its upstream stays silent longer
 * than `KEEPALIVE_MS` (1 s in the test configuration; a long prefill simulated with `delay_ms`),
 * Deltagate sends `{"type":"keepalive","sequence_number":N}` — a WebSocket text frame (with the
 * lane's `stream_id`) or an SSE `event: keepalive` — numbered and logged like any event. The socket
 * stays open, and the `openai` SDK (its accumulator, `responses.stream`, streamed `create`) finishes
 * the response without error. A client that sends `x-deltagate-keepalive: 0` (on its upgrade, or
 * `?keepalive=0`; on a `POST /v1/responses`) gets none: its stream stays contiguous without them.
 */
import { describe, it } from "vitest";
import { sdkClient } from "../support/sdk-client.ts";
import { SseReader } from "../support/sse-reader.ts";
import { connect, KEY_A, uniqueSession, validateWithSdk, workerFetch } from "../support/ws-client.ts";

const MODEL = "deltagate-sim";
const SILENT = "think first [sim:delay_ms=3000] [sim:tokens=5]";

// The tests run at once: each waits out its own silent upstream (3 s), so side by side the file
// takes one wait instead of four. Sessions are their own (distinct session ids and conversations).
describe.concurrent("keepalive", () => {
  it("fills a silent upstream with keepalive frames on every lane; the SDK accumulator ignores them", async ({
    expect,
  }) => {
    const ws = await connect({ session: uniqueSession("keepalive-ws") });
    ws.send({ type: "response.create", model: MODEL, input: SILENT });
    ws.send({ type: "response.create", model: MODEL, stream_id: "side", input: SILENT });
    for (const lane of [undefined, "side"]) {
      const frames = await ws.turn(0, lane);
      const types = frames.map((f) => f.type);
      expect(types.slice(0, 2)).toEqual(["response.created", "response.in_progress"]);
      const keepalives = frames.filter((f) => f.type === "keepalive");
      expect(keepalives.length).toBeGreaterThanOrEqual(1);
      for (const frame of keepalives) {
        expect(Object.keys(frame).sort()).toEqual(
          lane ? ["sequence_number", "stream_id", "type"] : ["sequence_number", "type"],
        );
      }
      // Before the upstream's first output event.
      expect(types.indexOf("keepalive")).toBeLessThan(types.indexOf("response.output_item.added"));
      expect(types.at(-1)).toBe("response.completed");
      const final = await validateWithSdk(frames);
      expect(final.output_text.length).toBeGreaterThan(0);
    }
    expect(ws.closeEvent).toBeNull();
    ws.close();
  });

  it("sends event: keepalive on SSE, logs it for replay, and the SDK's HTTP stream finishes", async ({
    expect,
  }) => {
    // The SDK's two ways of reading a stream run beside the raw one: each waits out the same
    // silent upstream.
    const client = sdkClient();
    const sdkStream = (async () => {
      const stream = client.responses.stream({ model: MODEL, input: SILENT });
      const seen: string[] = [];
      stream.on("event", (event) => seen.push(event.type));
      return [seen, await stream.finalResponse()] as const;
    })();
    const sdkIterated = (async () => {
      const iterated: string[] = [];
      for await (const event of await client.responses.create({
        model: MODEL,
        input: SILENT,
        stream: true,
      })) {
        iterated.push(event.type);
      }
      return iterated;
    })();
    const auth = { authorization: `Bearer ${KEY_A}` };
    const res = await workerFetch("/v1/responses", {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, input: SILENT, stream: true }),
    });
    const events = await new SseReader(res.body!).rest();
    const at = events.findIndex((e) => e.data.type === "keepalive");
    const keepalive = events[at];
    expect(keepalive?.name).toBe("keepalive");
    // Numbered in the stream like any event: its position (after created and in_progress).
    expect(at).toBeGreaterThanOrEqual(2);
    expect(keepalive?.data).toEqual({ type: "keepalive", sequence_number: at });
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i));
    const id = (events[0]!.data.response as { id: string }).id;
    const replay = await new SseReader(
      (await workerFetch(`/v1/responses/${id}?stream=true&starting_after=-1`, { headers: auth })).body!,
    ).rest();
    expect(replay.map((e) => e.data)).toEqual(events.map((e) => e.data));

    const [seen, final] = await sdkStream;
    expect(final.status).toBe("completed");
    expect(seen).toContain("keepalive");
    const iterated = await sdkIterated;
    expect(iterated).toContain("keepalive");
    expect(iterated.at(-1)).toBe("response.completed");
  });

  it("sends none to a socket that turned them off at its upgrade (header or query parameter)", async ({
    expect,
  }) => {
    // Both sockets at once: each turn waits out the same silent upstream.
    const off = async (path: string) => {
      const headers: Record<string, string> = { upgrade: "websocket", authorization: `Bearer ${KEY_A}` };
      if (!path.includes("?")) headers["x-deltagate-keepalive"] = "0";
      const res = await workerFetch(path, { headers });
      expect(res.status).toBe(101);
      const socket = res.webSocket!;
      socket.accept();
      const frames: Array<{ type: string; sequence_number?: number }> = [];
      const done = new Promise<void>((resolve) => {
        socket.addEventListener("message", (event) => {
          const frame = JSON.parse(event.data as string) as { type: string; sequence_number?: number };
          frames.push(frame);
          if (frame.type === "response.completed") resolve();
        });
      });
      socket.send(JSON.stringify({ type: "response.create", model: MODEL, input: SILENT }));
      await done;
      expect(frames.map((f) => f.type)).not.toContain("keepalive");
      expect(frames.map((f) => f.sequence_number)).toEqual(frames.map((_, i) => i));
      socket.close();
    };
    await Promise.all(["/v1/responses", "/v1/responses?keepalive=0"].map(off));
  });

  it("sends none on an HTTP stream that turned them off; a malformed value is a 400", async ({ expect }) => {
    const headers = { authorization: `Bearer ${KEY_A}`, "content-type": "application/json" };
    const res = await workerFetch("/v1/responses", {
      method: "POST",
      headers: { ...headers, "x-deltagate-keepalive": "off" },
      body: JSON.stringify({ model: MODEL, input: SILENT, stream: true }),
    });
    const events = await new SseReader(res.body!).rest();
    expect(events.map((e) => e.data.type)).not.toContain("keepalive");
    expect(events.at(-1)?.data.type).toBe("response.completed");
    const bad = await workerFetch("/v1/responses", {
      method: "POST",
      headers: { ...headers, "x-deltagate-keepalive": "sometimes" },
      body: JSON.stringify({ model: MODEL, input: "hi", stream: true }),
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({
      error: { code: "invalid_value", param: "x-deltagate-keepalive" },
    });
  });
});
