/**
 * Resumable streams (issue #3 §3): a client cut off mid-response resumes from its last
 * `sequence_number` and receives exactly the remaining events — over HTTP with
 * `GET /v1/responses/{id}?stream=true&starting_after=N` and over WebSocket with Deltagate's
 * `deltagate.response.resume` extension — and the final text equals an uncut run's text.
 */
import { describe, expect, it } from "vitest";
import { connect, type Frame, KEY_A, outputText, uniqueSession, workerFetch } from "../support/ws-client.ts";

const MODEL = "deltagate-sim";
const PROMPT = "Tell a long story [sim:tokens=600]";

type SseEvent = { type: string; sequence_number: number; delta?: string; response?: { id: string } };

/** Reads SSE events from a response body; stops (and cancels the body) after `limit` events. */
async function readSse(
  body: ReadableStream<Uint8Array>,
  limit = Number.POSITIVE_INFINITY,
): Promise<SseEvent[]> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  const events: SseEvent[] = [];
  let buffer = "";
  while (events.length < limit) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let cut = buffer.indexOf("\n\n");
    while (cut >= 0 && events.length < limit) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = block.split("\n").find((line) => line.startsWith("data: "));
      if (data) events.push(JSON.parse(data.slice(6)) as SseEvent);
      cut = buffer.indexOf("\n\n");
    }
  }
  await reader.cancel().catch(() => {});
  return events;
}

function text(events: Array<{ type: string; delta?: unknown }>): string {
  return events
    .filter((e) => e.type === "response.output_text.delta")
    .map((e) => String(e.delta))
    .join("");
}

const post = (body: unknown) =>
  workerFetch("/v1/responses", {
    method: "POST",
    headers: { authorization: `Bearer ${KEY_A}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("resumable streams", () => {
  it("over HTTP: a cut stream resumes with starting_after and gets exactly the rest", async () => {
    const uncut = await readSse((await post({ model: MODEL, input: PROMPT, stream: true })).body!);
    expect(uncut.at(-1)?.type).toBe("response.completed");

    const first = await readSse((await post({ model: MODEL, input: PROMPT, stream: true })).body!, 8);
    const id = first[0]!.response!.id;
    const last = first.at(-1)!.sequence_number;
    const resumed = await readSse(
      (
        await workerFetch(`/v1/responses/${id}?stream=true&starting_after=${last}`, {
          headers: { authorization: `Bearer ${KEY_A}` },
        })
      ).body!,
    );
    expect(resumed[0]?.sequence_number).toBe(last + 1);
    const all = [...first, ...resumed];
    expect(all.map((e) => e.sequence_number)).toEqual(all.map((_, i) => i));
    expect(all.at(-1)?.type).toBe("response.completed");
    expect(text(all)).toBe(text(uncut));

    // After completion the persisted log replays too.
    const replay = await readSse(
      (
        await workerFetch(`/v1/responses/${id}?stream=true&starting_after=2`, {
          headers: { authorization: `Bearer ${KEY_A}` },
        })
      ).body!,
    );
    expect(replay.map((e) => e.sequence_number)).toEqual(all.slice(3).map((e) => e.sequence_number));
  });

  it("over WebSocket: deltagate.response.resume on a new socket gets exactly the rest", async () => {
    const session = uniqueSession("ws-resume");
    const reference = await connect({ session: uniqueSession("ws-resume-ref") });
    reference.send({ type: "response.create", model: MODEL, input: PROMPT });
    const uncut = await reference.turn(0);
    reference.close();

    const ws = await connect({ session });
    ws.send({ type: "response.create", model: MODEL, input: PROMPT });
    await ws.until((f) => f.filter((x) => x.type === "response.output_text.delta").length >= 3);
    ws.close();
    const seen = [...ws.frames];
    const id = (seen[0] as unknown as { response: { id: string } }).response.id;
    const last = seen.at(-1)!.sequence_number!;

    const again = await connect({ session });
    again.send({ type: "deltagate.response.resume", response_id: id, starting_after: last });
    await again.until((f) => f.some((x) => x.type === "response.completed"));
    const rest = again.frames;
    expect(rest[0]?.sequence_number).toBe(last + 1);
    const all: Frame[] = [...seen, ...rest];
    expect(all.map((f) => f.sequence_number)).toEqual(all.map((_, i) => i));
    expect(text(all as Array<{ type: string; delta?: unknown }>)).toBe(outputText(uncut));
    again.close();
  });

  it("rejects resuming an unknown response with a not-found error event", async () => {
    const ws = await connect({ session: uniqueSession("ws-resume-404") });
    ws.send({ type: "deltagate.response.resume", response_id: "resp_nope", starting_after: 0 });
    await ws.until((f) => f.length > 0);
    expect(ws.frames[0]).toMatchObject({ type: "error", status: 404 });
    ws.close();
  });
});
