/**
 * Server-Sent Events parsing for upstream streams (WHATWG HTML §9.2 "Parsing an event stream").
 * Owns byte → event decoding. Invariant: a multi-byte UTF-8 character split across network
 * chunks is decoded intact (the decoder runs in streaming mode), so is a CRLF split between its
 * CR and LF, and an event is yielded only once its terminating blank line has arrived.
 * Source: https://html.spec.whatwg.org/multipage/server-sent-events.html#parsing-an-event-stream
 */

/** One dispatched SSE event: `event` defaults to "message"; `data` lines joined with "\n". */
export interface SseEvent {
  event: string;
  data: string;
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
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  const onAbort = () => void reader.cancel().catch(() => {});
  signal?.addEventListener("abort", onAbort, { once: true });
  let buffer = "";
  let event = "";
  let data: string[] = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        // A CR at the very end is a whole line ending, not half of a CRLF: process it.
        if (!buffer.endsWith("\r")) break;
        buffer += "\n";
      } else {
        buffer += value;
      }
      let newline = buffer.search(/\r\n|\r|\n/);
      while (newline >= 0) {
        // A CR ending the buffer may be the first half of a CRLF cut between chunks: wait for more.
        if (newline === buffer.length - 1 && buffer.endsWith("\r")) break;
        const line = buffer.slice(0, newline);
        const width = buffer.startsWith("\r\n", newline) ? 2 : 1;
        buffer = buffer.slice(newline + width);
        if (line === "") {
          if (data.length > 0) yield { event: event || "message", data: data.join("\n") };
          event = "";
          data = [];
        } else if (!line.startsWith(":")) {
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          let val = colon < 0 ? "" : line.slice(colon + 1);
          if (val.startsWith(" ")) val = val.slice(1);
          if (field === "event") event = val;
          else if (field === "data") data.push(val);
        }
        newline = buffer.search(/\r\n|\r|\n/);
      }
      if (done) break;
    }
    signal?.throwIfAborted();
  } finally {
    signal?.removeEventListener("abort", onAbort);
    reader.releaseLock();
  }
}
