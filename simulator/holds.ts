/**
 * Named holds (`[sim:hold=NAME]`): a response that names a hold sends everything but its terminal
 * event, then waits until `POST /_sim/release?hold=NAME`. Lets a test act while a response is
 * provably still running (e.g. close its client socket) without racing the simulator's clock.
 * Invariant: a release is remembered, so a response that reaches its hold after the release
 * passes at once; a waiting response also passes when its request is aborted.
 */

/** The names this simulator instance has released, and the responses waiting on the others. */
export class Holds {
  readonly #released = new Set<string>();
  readonly #waiting = new Map<string, Set<() => void>>();

  /** Resolves once `name` is released or `signal` aborts (never rejects). */
  wait(name: string, signal: AbortSignal): Promise<void> {
    if (this.#released.has(name) || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const waiters = this.#waiting.get(name) ?? new Set<() => void>();
      this.#waiting.set(name, waiters);
      const done = () => {
        waiters.delete(done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      waiters.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  /** Releases `name`: every response waiting on it, and any that reaches it later, goes on. */
  release(name: string): void {
    this.#released.add(name);
    for (const done of [...(this.#waiting.get(name) ?? [])]) done();
    this.#waiting.delete(name);
  }
}
