/**
 * Server-Sent Events parsing for upstream streams, to the letter of the WHATWG HTML "event stream
 * interpretation" rules. Owns byte → event decoding.
 * Invariant: the events depend only on the bytes, never on where the reads end — a multi-byte
 * UTF-8 character (or the byte order mark) split across reads is decoded intact (streaming
 * `TextDecoder`), and a CR ending one read followed by an LF starting the next is one line end,
 * not two. An event is dispatched only once its terminating blank line has arrived.
 * Source: https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
 */

/** One dispatched SSE event. */
export interface SseEvent {
  /** The `event:` field of its block, or "message". */
  event: string;
  /** Its `data:` lines joined with "\n". */
  data: string;
  /** The last event ID seen so far in the stream ("" until an `id:` field set one). */
  id: string;
}

const LINE_END = /[\r\n]/g;
const DIGITS = /^[0-9]+$/;

/**
 * An incremental, synchronous SSE parser: push the bytes of each read as it arrives, get the
 * events it completed. Pure (no I/O), so the split-independence property can be tested directly.
 */
export class SseParser {
  /** UTF-8 with replacement of invalid bytes; strips one leading BOM (ignoreBOM defaults to false). */
  private readonly decoder = new TextDecoder("utf-8");
  /** The current line's text received so far (its end not yet seen). */
  private line = "";
  /** The last character consumed was a CR, so an LF starting the next text belongs to it. */
  private afterCr = false;
  private eventType = "";
  private data = "";
  private lastEventId = "";
  /** The stream's reconnection time from its last valid `retry:` field, ms (unused by Deltagate). */
  reconnectionTime: number | null = null;

  /** Feeds the bytes of one read; returns the events they completed, in order. */
  push(bytes: Uint8Array): SseEvent[] {
    return this.feed(this.decoder.decode(bytes, { stream: true }));
  }

  /**
   * Ends the stream. Flushes the decoder (an incomplete character becomes U+FFFD); the event
   * still pending (no blank line yet) is discarded, as the spec requires.
   */
  end(): SseEvent[] {
    const events = this.feed(this.decoder.decode());
    this.line = "";
    this.data = "";
    this.eventType = "";
    return events;
  }

  private feed(text: string): SseEvent[] {
    const events: SseEvent[] = [];
    let start = 0;
    if (this.afterCr && text.length > 0) {
      if (text.charCodeAt(0) === 10) start = 1;
      this.afterCr = false;
    }
    LINE_END.lastIndex = start;
    for (let match = LINE_END.exec(text); match; match = LINE_END.exec(text)) {
      const end = match.index;
      const line = this.line + text.slice(start, end);
      this.line = "";
      start = end + 1;
      if (text.charCodeAt(end) === 13) {
        if (start === text.length) this.afterCr = true;
        else if (text.charCodeAt(start) === 10) start += 1;
      }
      LINE_END.lastIndex = start;
      const event = this.processLine(line);
      if (event) events.push(event);
    }
    this.line += text.slice(start);
    return events;
  }

  private processLine(line: string): SseEvent | null {
    if (line === "") return this.dispatch();
    if (line.charCodeAt(0) === 58) return null; // ":" starts a comment
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    switch (field) {
      case "event":
        this.eventType = value;
        break;
      case "data":
        this.data += `${value}\n`;
        break;
      case "id":
        if (!value.includes("\u0000")) this.lastEventId = value;
        break;
      case "retry":
        if (DIGITS.test(value)) this.reconnectionTime = Number(value);
        break;
      default:
        break; // unknown fields are ignored
    }
    return null;
  }

  private dispatch(): SseEvent | null {
    const data = this.data;
    const event = this.eventType || "message";
    this.data = "";
    this.eventType = "";
    if (data === "") return null;
    return { event, data: data.slice(0, -1), id: this.lastEventId };
  }
}

/**
 * Yields the events of an SSE body.
 * @param body the response body bytes.
 * @param signal aborts reading (the reader is cancelled).
 * @throws whatever the body stream raises (network loss), and an `AbortError` when aborted.
 */
export async function* parseSse(
  body: ReadableStream<Uint8Array>,
  signal?: AbortSignal,
): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const onAbort = () => void reader.cancel().catch(() => {});
  signal?.addEventListener("abort", onAbort, { once: true });
  const parser = new SseParser();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      yield* parser.push(value);
    }
    yield* parser.end();
    signal?.throwIfAborted();
  } finally {
    signal?.removeEventListener("abort", onAbort);
    reader.releaseLock();
  }
}
