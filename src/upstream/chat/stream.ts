/**
 * The Chat Completions response pipeline: SSE body bytes → `chat.completion.chunk`s → Responses
 * stream events. Owns the stream-level rules: `data: [DONE]` ends it, an in-stream `{error:{…}}`
 * (or an `event: error`) becomes an `UpstreamError`, a chunk that is not JSON or not chunk-shaped
 * is a broken stream, and the first event (`response.created`) is produced only once a first
 * valid chunk arrived, so `Upstream.open()` can tell "failed before the first event" apart.
 * Invariant: bytes are decoded by `parseSse` in streaming mode, so a multi-byte UTF-8 character
 * split across network chunks reaches the deltas intact.
 * Source: https://platform.openai.com/docs/api-reference/chat/streaming.
 */
import { asUpstreamError } from "../error-mapping.ts";
import { parseSse } from "../sse.ts";
import { brokenStream } from "../translated-stream.ts";
import { UpstreamError, type UpstreamEvent } from "../upstream.ts";
import type { ChatEventSynthesizer } from "./synthesizer.ts";
import { type ChatChunk, chatChunk } from "./wire.ts";

/** The `UpstreamError` of an in-stream error object (OpenAI-style `{error:{message, code}}`). */
function streamError(error: NonNullable<ChatChunk["error"]> | null): UpstreamError {
  const message = error?.message ? error.message : "The upstream reported an error.";
  const code = typeof error?.code === "string" ? error.code : "upstream_error";
  return new UpstreamError(500, code, message);
}

function parseChunk(data: string): ChatChunk {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw brokenStream("The upstream sent a chunk that is not JSON.");
  }
  const parsed = chatChunk.safeParse(value);
  if (!parsed.success) throw brokenStream("The upstream sent a chunk that is not a chat.completion.chunk.");
  return parsed.data;
}

/**
 * Yields the Responses events of a streamed chat completion.
 * @param body the upstream response body (`text/event-stream`).
 * @param synthesizer a fresh synthesizer for this response.
 * @param signal aborting it cancels the body read.
 * @throws {UpstreamError} 502 when the stream breaks (network loss, bad chunk, cut off before a
 *   finish reason), 500 (or the upstream's code) for an in-stream error; an abort propagates as is.
 */
export async function* chatStreamEvents(
  body: ReadableStream<Uint8Array>,
  synthesizer: ChatEventSynthesizer,
  signal: AbortSignal,
): AsyncGenerator<UpstreamEvent> {
  let started = false;
  try {
    for await (const sse of parseSse(body, signal)) {
      if (sse.data === "[DONE]") {
        if (!started) throw brokenStream("The upstream ended the stream before sending any chunk.");
        yield* synthesizer.end(true);
        return;
      }
      if (sse.event === "error") throw streamError(parseErrorData(sse.data));
      const chunk = parseChunk(sse.data);
      if (chunk.error) throw streamError(chunk.error);
      started = true;
      yield* synthesizer.push(chunk);
    }
    if (!started) throw brokenStream("The upstream closed the stream before sending any chunk.");
    yield* synthesizer.end(false);
  } catch (cause) {
    throw asUpstreamError(cause, signal);
  }
}

/** The error of an `event: error` SSE event: `{error:{message, code}}` or a bare `{message, code}`. */
function parseErrorData(data: string): NonNullable<ChatChunk["error"]> | null {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return null;
  }
  const wrapped = chatChunk.safeParse(value);
  if (wrapped.success && wrapped.data.error) return wrapped.data.error;
  const bare = chatChunk.shape.error.safeParse(value);
  return bare.success ? (bare.data ?? null) : null;
}
