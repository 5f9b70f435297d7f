/**
 * Reads one upstream WebSocket message as a Responses stream event.
 * Owns the frame → event rule: a text frame, or a binary frame (`ArrayBuffer` with
 * `binaryType = "arraybuffer"`, or any `ArrayBufferView`) decoded as ONE whole UTF-8 message — the
 * runtime delivers complete messages (fragments reassembled), so no character can be split
 * across frames — holding a JSON object with a string `type`.
 * Invariant: bytes that are not valid UTF-8 make the frame invalid (never silently replaced with
 * U+FFFD, which would alter arguments or text); anything else (a `Blob`, non-JSON, no `type`) is
 * invalid too, and the caller closes the socket.
 * One exception to parsing: a lifecycle event (`response.created` / `in_progress` / `queued`) is
 * recognized by the start of its frame and returned as `{ type }` alone. Its content is never
 * read — the engine announces each response itself, and the upstream's response id is taken from
 * the terminal event — while it is the largest part of a turn's frames (it carries the whole
 * Response object: tools, instructions, metadata), so it is not parsed.
 * Sources: https://www.rfc-editor.org/rfc/rfc6455#section-5.6 (text frames carry UTF-8),
 * https://developers.cloudflare.com/workers/runtime-apis/websockets/ (binaryType).
 */
import type { UpstreamEvent } from "../upstream.ts";

/** Not streaming: each message is decoded whole; `fatal` rejects invalid UTF-8; a BOM is dropped. */
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** The text of a message, or null when it is neither text nor valid UTF-8 bytes. */
export function frameText(data: unknown): string | null {
  if (typeof data === "string") return data;
  if (!(data instanceof ArrayBuffer) && !ArrayBuffer.isView(data)) return null;
  try {
    return decoder.decode(data);
  } catch {
    return null;
  }
}

/** The lifecycle event types whose frames are not parsed, by the exact start of their frame. */
const LIFECYCLE_FRAME_STARTS: ReadonlyArray<readonly [string, string]> = [
  "response.created",
  "response.in_progress",
  "response.queued",
].map((type) => [`{"type":${JSON.stringify(type)},`, type] as const);

/** The type of a lifecycle event's frame (see the module comment), or null for any other frame. */
function lifecycleType(text: string): string | null {
  if (!text.endsWith("}")) return null;
  for (const [start, type] of LIFECYCLE_FRAME_STARTS) if (text.startsWith(start)) return type;
  return null;
}

/** The event a message carries, or null when the frame is invalid. */
export function frameEvent(data: unknown): UpstreamEvent | null {
  const text = frameText(data);
  if (text === null) return null;
  const lifecycle = lifecycleType(text);
  if (lifecycle !== null) return { type: lifecycle };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  // The shape is checked by hand, not with a schema: this runs for every event of every turn,
  // and the event is used as parsed (no copy), as each consumer reads its fields defensively.
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  return typeof (value as { type?: unknown }).type === "string" ? (value as UpstreamEvent) : null;
}
