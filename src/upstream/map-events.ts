/**
 * A lazy map over an upstream's event stream, for the decorators every event passes through
 * (the stages of src/pipeline/, the encrypted-reasoning origin mark). Owns their per-event cost:
 * an async generator (`for await … yield`) costs several promise turns per event and layer; this
 * iterator costs one, plus one more only when `map` itself is asynchronous for that event.
 * Invariants: events come out in order, one `next()` of the source per `next()`; an error of the
 * source (passed through `mapError`) or of `map` rejects that `next()`; `return()` is forwarded
 * to the source, so a consumer that stops reading releases it.
 */

/** Options of `mapEvents`. */
export interface MapEventsOptions {
  /** What an error of the source becomes (it is rethrown as is by default). */
  mapError?: (cause: unknown) => unknown;
}

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

/** `source` with every value passed through `map` (which may return a promise for some). */
export function mapEvents<T, U>(
  source: AsyncIterable<T>,
  map: (value: T) => U | PromiseLike<U>,
  options: MapEventsOptions = {},
): AsyncIterable<U> {
  const { mapError } = options;
  return {
    [Symbol.asyncIterator](): AsyncIterator<U> {
      const inner = source[Symbol.asyncIterator]();
      const mapped = (result: IteratorResult<T>): IteratorResult<U> | PromiseLike<IteratorResult<U>> => {
        if (result.done) return { done: true, value: undefined };
        const value = map(result.value);
        return isPromiseLike(value)
          ? value.then((v): IteratorResult<U> => ({ done: false, value: v }))
          : { done: false, value };
      };
      const failed = mapError
        ? (cause: unknown): never => {
            throw mapError(cause);
          }
        : undefined;
      return {
        next: () => inner.next().then(mapped, failed),
        return: async (): Promise<IteratorResult<U>> => {
          await inner.return?.();
          return { done: true, value: undefined };
        },
      };
    },
  };
}
