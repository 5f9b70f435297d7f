/**
 * Reads a Deltagate SSE body event by event, so a test can act in the middle of a stream (cancel
 * it, stop reading) and then read on. Each event keeps its SSE `event:` name and the time it
 * arrived.
 */

/** One SSE event: its `event:` name, its parsed `data:` JSON and when it was read (ms). */
export interface SseEvent {
  name: string;
  data: { type: string; sequence_number: number; [field: string]: unknown };
  at: number;
}

/** An incremental reader of one SSE body. */
export class SseReader {
  readonly events: SseEvent[] = [];
  private readonly reader: ReadableStreamDefaultReader<string>;
  private buffer = "";
  private ended = false;

  constructor(body: ReadableStream<Uint8Array>) {
    this.reader = body.pipeThrough(new TextDecoderStream()).getReader();
  }

  /** True once the body ended. */
  get done(): boolean {
    return this.ended;
  }

  /** The next event, or null when the body ended. */
  async next(): Promise<SseEvent | null> {
    for (;;) {
      const cut = this.buffer.indexOf("\n\n");
      if (cut >= 0) {
        const block = this.buffer.slice(0, cut);
        this.buffer = this.buffer.slice(cut + 2);
        const lines = block.split("\n");
        const data = lines.find((line) => line.startsWith("data: "));
        if (!data) continue; // a comment-only block
        const name = lines.find((line) => line.startsWith("event: "))?.slice(7) ?? "message";
        const event: SseEvent = { name, data: JSON.parse(data.slice(6)) as SseEvent["data"], at: Date.now() };
        this.events.push(event);
        return event;
      }
      if (this.ended) return null;
      const { value, done } = await this.reader.read();
      if (done) this.ended = true;
      else this.buffer += value;
    }
  }

  /** Reads until `predicate` holds for an event (returned), or null when the body ended first. */
  async until(predicate: (event: SseEvent["data"]) => boolean): Promise<SseEvent | null> {
    for (;;) {
      const event = await this.next();
      if (!event || predicate(event.data)) return event;
    }
  }

  /** Reads everything that is left; returns every event read so far. */
  async rest(): Promise<SseEvent[]> {
    while (await this.next());
    return this.events;
  }

  /** Stops reading (cancels the body). */
  async cancel(): Promise<void> {
    await this.reader.cancel().catch(() => {});
  }
}
