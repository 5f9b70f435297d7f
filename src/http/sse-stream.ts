/**
 * A Server-Sent Events response body fed by the turn engine (as OpenAI streams: each event as
 * `event: <type>\ndata: <json>\n\n`, no `[DONE]`). Owns the stream's lifetime: it closes itself
 * after a terminal event, and reports a client that went away through `onCancel`.
 * Source: https://html.spec.whatwg.org/multipage/server-sent-events.html
 */
import type { EventSink } from "../engine/event-sink.ts";
import { endsStream, type ServerEvent } from "../protocol/server-events.ts";

const encoder = new TextEncoder();

/** An SSE body that is also an `EventSink`. */
export class SseStream implements EventSink {
  readonly readable: ReadableStream<Uint8Array>;
  private controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  private done = false;
  /** Stay open after the terminal event, for a `trailer`. */
  private holding = false;
  private cancelHandlers: Array<() => void> = [];

  constructor() {
    this.readable = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.controller = controller;
      },
      cancel: () => {
        this.done = true;
        for (const handler of this.cancelHandlers.splice(0)) handler();
      },
    });
  }

  /** Registers a callback for when the client stops reading (disconnects). */
  onCancel(handler: () => void): void {
    this.cancelHandlers.push(handler);
  }

  /**
   * Writes one event (`json`: its JSON text, when already made); closes the stream after a
   * terminal one (unless `holdOpen` was called).
   */
  send(event: ServerEvent, json?: string): void {
    if (this.done || !this.controller) return;
    const data = json ?? JSON.stringify(event);
    this.controller.enqueue(encoder.encode(`event: ${event.type}\ndata: ${data}\n\n`));
    if (endsStream(event.type) && !this.holding) this.close();
  }

  /** Keeps the stream open after its terminal event: the caller ends it with `trailer` or `close`. */
  holdOpen(): void {
    this.holding = true;
  }

  /** Writes one last event that is not part of the response's stream (no sequence number), and ends. */
  trailer(event: { type: string } & Record<string, unknown>): void {
    if (this.done || !this.controller) return;
    this.controller.enqueue(encoder.encode(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`));
    this.close();
  }

  /** Ends the stream (idempotent). */
  close(): void {
    if (this.done) return;
    this.done = true;
    this.controller?.close();
  }

  /** The HTTP response carrying this stream. */
  response(headers: Record<string, string> = {}): Response {
    return new Response(this.readable, {
      status: 200,
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        ...headers,
      },
    });
  }
}
