/**
 * A single-consumer push/pull queue: the upstream socket pushes events as frames arrive, the turn
 * engine pulls them with `for await`. Owns buffering between the two, so a slow (or absent)
 * consumer never blocks the socket and the socket's turn slot is released by the upstream's own
 * terminal event, not by the consumer.
 * Invariant: after `end()` or `fail()` nothing more is accepted; buffered items are still
 * delivered before the end (or the failure) is observed.
 */

/** An async iterable fed by `push`, closed by `end` or `fail`. */
export class EventChannel<T> implements AsyncIterable<T> {
  private readonly buffer: T[] = [];
  private done = false;
  private failure: { cause: unknown } | null = null;
  private wake: (() => void) | null = null;

  /** Appends `item` (ignored once the channel is closed). */
  push(item: T): void {
    if (this.done) return;
    this.buffer.push(item);
    this.signal();
  }

  /** Closes the channel normally: iteration ends after the buffered items. */
  end(): void {
    if (this.done) return;
    this.done = true;
    this.signal();
  }

  /** Closes the channel with an error: iteration throws `cause` after the buffered items. */
  fail(cause: unknown): void {
    if (this.done) return;
    this.done = true;
    this.failure = { cause };
    this.signal();
  }

  /** True once `end` or `fail` was called. */
  get closed(): boolean {
    return this.done;
  }

  private signal(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  /**
   * A plain iterator rather than an async generator: a buffered event is handed out with one
   * promise turn (a generator costs several per event). One consumer, one `next()` at a time;
   * `return()` stops the consumer's iteration at once (buffered events are dropped).
   */
  [Symbol.asyncIterator](): AsyncIterator<T> {
    let stopped = false;
    const next = (): Promise<IteratorResult<T>> => {
      if (stopped) return Promise.resolve({ done: true, value: undefined });
      if (this.buffer.length > 0) return Promise.resolve({ done: false, value: this.buffer.shift() as T });
      if (this.done) {
        stopped = true;
        return this.failure
          ? Promise.reject(this.failure.cause)
          : Promise.resolve({ done: true, value: undefined });
      }
      return new Promise<void>((resolve) => {
        this.wake = resolve;
      }).then(next);
    };
    return {
      next,
      return: () => {
        stopped = true;
        this.signal(); // a pending next() resolves as done
        return Promise.resolve({ done: true, value: undefined });
      },
    };
  }
}
