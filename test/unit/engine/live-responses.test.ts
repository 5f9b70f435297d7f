/**
 * Replay of a finished response's persisted log (src/engine/live-responses.ts
 * `loggedEventsAfter`): the events after `starting_after`, always ending with the terminal event.
 */
import { describe, expect, it } from "vitest";
import { loggedEventsAfter } from "../../../src/engine/live-responses.ts";

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

  it("ends with the terminal event even when starting_after is past it", () => {
    expect(seqs(3)).toEqual([3]);
    expect(seqs(500)).toEqual([3]);
  });

  it("sends nothing extra for a log that has no terminal event", () => {
    expect(loggedEventsAfter(log.slice(0, 3), 5)).toEqual([]);
  });
});
