/**
 * The push/pull queue between an upstream socket and the turn (src/upstream/responses-ws/
 * event-channel.ts): events come out in order whether pushed before or while the consumer waits;
 * buffered events are delivered before the end or the failure; nothing is accepted after the end;
 * `return()` ends a consumer's pending read at once.
 */
import { describe, expect, it } from "vitest";
import { EventChannel } from "../../../../src/upstream/responses-ws/event-channel.ts";

async function drain<T>(channel: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const value of channel) out.push(value);
  return out;
}

describe("EventChannel", () => {
  it("delivers events pushed before and during the wait, in order, then ends", async () => {
    const channel = new EventChannel<number>();
    channel.push(1);
    channel.push(2);
    const done = drain(channel);
    await Promise.resolve();
    channel.push(3);
    setTimeout(() => {
      channel.push(4);
      channel.end();
      channel.push(5); // ignored: the channel ended
    }, 1);
    expect(await done).toEqual([1, 2, 3, 4]);
    expect(channel.closed).toBe(true);
  });

  it("delivers the buffered events before the failure", async () => {
    const channel = new EventChannel<number>();
    const seen: number[] = [];
    channel.push(1);
    channel.push(2);
    channel.fail(new Error("lost"));
    const run = (async () => {
      for await (const value of channel) seen.push(value);
    })();
    await expect(run).rejects.toThrow("lost");
    expect(seen).toEqual([1, 2]);
  });

  it("ends a pending read when the consumer returns", async () => {
    const channel = new EventChannel<number>();
    const iterator = channel[Symbol.asyncIterator]();
    const pending = iterator.next();
    await iterator.return?.();
    expect(await pending).toEqual({ done: true, value: undefined });
    channel.push(1);
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
  });
});
