/**
 * The live-response registry (src/engine/live-responses.ts): replay-then-live subscription without
 * gap or duplicate, cancellation of an abandoned store:true response after its grace period, and
 * replay of a finished response's persisted log (`loggedEventsAfter`): the events after
 * `starting_after`, ending with the terminal event.
 */
import { describe, expect, it } from "vitest";
import { LiveRegistry, loggedEventsAfter } from "../../../src/engine/live-responses.ts";
import type { ServerEvent } from "../../../src/protocol/server-events.ts";

const event = (n: number): ServerEvent => ({
  type: "response.output_text.delta",
  sequence_number: n,
  delta: `${n}`,
});
const collector = () => {
  const seen: number[] = [];
  return { seen, sink: { send: (e: ServerEvent) => seen.push(e.sequence_number) } };
};

describe("live responses", () => {
  it("replays events after starting_after, then streams live ones", () => {
    const registry = new LiveRegistry(60_000);
    const creator = collector();
    const live = registry.begin("resp_1", creator.sink, true);
    for (let n = 0; n < 5; n++) live.publish(event(n));
    const late = collector();
    expect(live.subscribe(late.sink, 2)).toBe(true);
    live.publish(event(5));
    expect(late.seen).toEqual([3, 4, 5]);
    expect(creator.seen).toEqual([0, 1, 2, 3, 4, 5]);
    registry.end("resp_1");
  });

  it("cancels an abandoned store:true response after the grace period, not before", async () => {
    const registry = new LiveRegistry(50);
    const creator = collector();
    const live = registry.begin("resp_2", creator.sink, true);
    registry.detachEverywhere(creator.sink);
    expect(live.signal.aborted).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(live.signal.aborted).toBe(true);
    expect(live.signal.reason).toBe("abandoned");
  });

  it("keeps a response whose client came back within the grace period", async () => {
    const registry = new LiveRegistry(50);
    const creator = collector();
    const live = registry.begin("resp_3", creator.sink, true);
    registry.detachEverywhere(creator.sink);
    live.subscribe(collector().sink, -1);
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(live.signal.aborted).toBe(false);
    registry.end("resp_3");
  });

  it("never abandons store:false responses (they die with their socket instead)", async () => {
    const registry = new LiveRegistry(20);
    const creator = collector();
    const live = registry.begin("resp_4", creator.sink, false);
    registry.detachEverywhere(creator.sink);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(live.signal.aborted).toBe(false);
    registry.end("resp_4");
  });
});

const log = [
  { type: "response.created", sequence_number: 0 },
  { type: "response.output_text.delta", sequence_number: 1 },
  { type: "keepalive", sequence_number: 2 },
  { type: "response.failed", sequence_number: 3 },
];
const seqs = (startingAfter: number) => loggedEventsAfter(log, startingAfter).map((e) => e.sequence_number);

describe("loggedEventsAfter", () => {
  it("sends the events after starting_after", () => {
    expect(seqs(-1)).toEqual([0, 1, 2, 3]);
    expect(seqs(1)).toEqual([2, 3]);
  });

  it("sends nothing to a client that has the terminal event", () => {
    expect(seqs(3)).toEqual([]);
  });

  it("ends with the terminal event when starting_after is past it (events the log never got)", () => {
    expect(seqs(4)).toEqual([3]);
    expect(seqs(500)).toEqual([3]);
  });

  it("sends nothing extra for a log that has no terminal event", () => {
    expect(loggedEventsAfter(log.slice(0, 3), 5)).toEqual([]);
  });
});
