/**
 * What every adapter that translates another protocol's stream into Responses events shares
 * (Chat Completions, Anthropic Messages, Gemini): the 502 of a broken stream, each SSE event's
 * data read as JSON, the synthesized response's identity, and the stream handed to the engine
 * once its first event exists. Owns `brokenStream`, `sseJson`, `synthesisMetaFor` and
 * `startTranslatedStream`.
 * Invariant: `startTranslatedStream` resolves only with a first event (an upstream that ends first
 * is a 502 before anything reached the client, so a retry or fallback may still take the turn:
 * src/upstream/fallback.ts).
 */
import { parseSse } from "./sse.ts";
import type { SynthesisMeta } from "./synthesized-response.ts";
import { UpstreamError, type UpstreamEvent, type UpstreamRequest, type UpstreamStream } from "./upstream.ts";

/** 502 `upstream_error` for a stream that broke: data that is not JSON or not the protocol's shape. */
export function brokenStream(message: string): UpstreamError {
  return new UpstreamError(502, "upstream_error", message);
}

/**
 * Each SSE event's data parsed as JSON.
 * @param what what an event is called in the protocol ("event", "chunk"), for the error.
 * @throws {UpstreamError} 502 for data that is not JSON.
 */
export async function* sseJson(
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal,
  what: string,
): AsyncGenerator<unknown> {
  for await (const sse of parseSse(body, signal)) {
    try {
      yield JSON.parse(sse.data);
    } catch {
      throw brokenStream(`The upstream sent ${what === "event" ? "an" : "a"} ${what} that is not JSON.`);
    }
  }
}

/**
 * The identity of the Response an adapter synthesizes for `request`: its own id (`resp_<tag>_…`,
 * re-keyed by the engine), the client's model, the time and settings.
 */
export function synthesisMetaFor(
  tag: string,
  request: UpstreamRequest,
  id: string,
  now: () => number = Date.now,
): SynthesisMeta {
  return {
    id: `resp_${tag}_${id}`,
    model: request.model,
    createdAt: Math.floor(now() / 1000),
    settings: request.settings,
  };
}

/**
 * The stream of `events` once its first event arrived.
 * @throws {UpstreamError} 502 when it ends without one; whatever `events` throws first.
 */
export async function startTranslatedStream(events: AsyncGenerator<UpstreamEvent>): Promise<UpstreamStream> {
  const first = await events.next();
  if (first.done) {
    throw new UpstreamError(502, "upstream_error", "The upstream closed the stream before any event.");
  }
  return { first: first.value, rest: { [Symbol.asyncIterator]: () => events } };
}
