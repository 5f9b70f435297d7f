/**
 * The per-event map of the stream decorators (src/upstream/map-events.ts): values keep their
 * order through synchronous and asynchronous maps, a source error goes through `mapError`, and a
 * consumer that stops reading releases the source.
 */
import { describe, expect, it } from "vitest";
import { mapEvents } from "../../../src/upstream/map-events.ts";

async function* numbers(n: number, failAfter?: Error): AsyncGenerator<number> {
  for (let i = 1; i <= n; i++) yield i;
  if (failAfter) throw failAfter;
}

async function drain<T>(source: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const value of source) out.push(value);
  return out;
}

describe("mapEvents", () => {
  it("maps every value in order, synchronously or not", async () => {
    const mapped = mapEvents(numbers(4), (n) => (n % 2 === 0 ? Promise.resolve(n * 10) : n * 10));
    expect(await drain(mapped)).toEqual([10, 20, 30, 40]);
  });

  it("passes a source error through mapError", async () => {
    const mapped = mapEvents(numbers(2, new Error("raw")), (n) => n, {
      mapError: (cause) => new Error(`mapped ${(cause as Error).message}`),
    });
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const n of mapped) seen.push(n);
      })(),
    ).rejects.toThrow("mapped raw");
    expect(seen).toEqual([1, 2]);
  });

  it("forwards return() to the source when the consumer stops", async () => {
    let released = false;
    const source: AsyncIterable<number> = {
      [Symbol.asyncIterator]: () => ({
        next: async () => ({ done: false, value: 1 }),
        return: async () => {
          released = true;
          return { done: true, value: undefined };
        },
      }),
    };
    for await (const _ of mapEvents(source, (n) => n)) break;
    expect(released).toBe(true);
  });
});
