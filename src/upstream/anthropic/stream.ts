/**
 * The Anthropic response pipeline: SSE body bytes → stream events → Responses events. Owns the
 * stream-level rules: an event whose `type` Deltagate does not know is skipped (Anthropic may add
 * event types), an `event: error` becomes the mapped `UpstreamError` (errors.ts), data that is not
 * JSON or not event-shaped is a broken stream, and a stream that ends before `message_stop` is cut
 * off (502).
 * Source: https://docs.anthropic.com/en/docs/build-with-claude/streaming ("Error events", "Other
 * events": handle unknown event types gracefully).
 */
import { asUpstreamError } from "../error-mapping.ts";
import { brokenStream, sseJson } from "../translated-stream.ts";
import type { UpstreamEvent } from "../upstream.ts";
import { anthropicError } from "./errors.ts";
import type { AnthropicEventSynthesizer } from "./synthesizer.ts";
import { streamEvent } from "./wire.ts";

const KNOWN = new Set([
  "message_start",
  "content_block_start",
  "content_block_delta",
  "content_block_stop",
  "message_delta",
  "message_stop",
  "ping",
  "error",
]);

/**
 * Yields the Responses events of a streamed Message.
 * @throws {UpstreamError} 502 when the stream breaks, the mapped error of an `error` event; an
 *   abort propagates as is.
 */
export async function* anthropicStreamEvents(
  body: ReadableStream<Uint8Array>,
  synthesizer: AnthropicEventSynthesizer,
  signal: AbortSignal,
): AsyncGenerator<UpstreamEvent> {
  try {
    for await (const value of sseJson(body, signal, "event")) {
      const type = (value as { type?: unknown } | null)?.type;
      if (typeof type !== "string" || !KNOWN.has(type)) continue;
      const parsed = streamEvent.safeParse(value);
      if (!parsed.success) throw brokenStream(`The upstream sent a malformed ${type} event.`);
      const event = parsed.data;
      if (event.type === "error") {
        throw anthropicError(
          null,
          event.error?.type ?? null,
          event.error?.message ?? "The upstream reported an error.",
        );
      }
      yield* synthesizer.push(event);
      if (synthesizer.finished) return;
    }
    throw brokenStream("The upstream stream ended before the message completed.");
  } catch (cause) {
    throw asUpstreamError(cause, signal);
  }
}
