/**
 * The live-response registry (issue #3 §3): replay-then-live subscription without gap or
 * duplicate, and cancellation of an abandoned store:true response after its grace period.
 */
import { describe, expect, it } from "vitest";
import { LiveRegistry } from "../../../src/engine/live-responses.ts";
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
