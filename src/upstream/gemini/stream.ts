/**
 * The Gemini response pipeline: SSE body bytes (`alt=sse`) → `GenerateContentResponse` chunks →
 * Responses events. Owns the stream-level rules: a chunk that is Google's error envelope
 * (`{"error": {code, message, status}}`, sent when the server fails after the stream began)
 * becomes the mapped `UpstreamError` (errors.ts); data that is not JSON or not chunk-shaped is a
 * broken stream; the terminal event is synthesized when the body ends, after the chunk that
 * carried the finish reason (a later chunk may still carry usage), and a body that ends before
 * any finish reason is cut off (502).
 * Source: https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent,
 * https://ai.google.dev/gemini-api/docs/text-generation#streaming-responses.
 */
import { asUpstreamError } from "../error-mapping.ts";
import { brokenStream, sseJson } from "../translated-stream.ts";
import type { UpstreamEvent } from "../upstream.ts";
import { asEnvelope, geminiError } from "./errors.ts";
import type { GeminiEventSynthesizer } from "./synthesizer.ts";
import { streamChunk } from "./wire.ts";

/**
 * Yields the Responses events of a streamed generation.
 * @throws {UpstreamError} 502 when the stream breaks, the mapped error of an error chunk; an
 *   abort propagates as is.
 */
export async function* geminiStreamEvents(
  body: ReadableStream<Uint8Array>,
  synthesizer: GeminiEventSynthesizer,
  signal: AbortSignal,
): AsyncGenerator<UpstreamEvent> {
  try {
    for await (const value of sseJson(body, signal, "chunk")) {
      if (typeof value === "object" && value !== null && "error" in value) {
        throw geminiError(null, asEnvelope(value));
      }
      const parsed = streamChunk.safeParse(value);
      if (!parsed.success) throw brokenStream("The upstream sent a malformed chunk.");
      yield* synthesizer.push(parsed.data);
    }
    yield* synthesizer.end();
  } catch (cause) {
    throw asUpstreamError(cause, signal);
  }
}
