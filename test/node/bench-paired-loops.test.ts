/**
 * The pairing of `npm run bench:noise` and `npm run bench:breakdown`, pure parts
 * (bench/paired-loops.ts): turn i of a round through one stack minus turn i of the same round
 * through another, and the runtime's CPU per turn over all rounds (not a median of coarse
 * per-loop readings). No processes, no timings.
 */
import { describe, expect, it } from "vitest";
import {
  cpuPerTurn,
  describeDiffs,
  describeGaps,
  pairedDiffs,
  quantileGap,
  signed,
} from "../../bench/paired-loops.ts";

describe("pairedDiffs", () => {
  it("pairs turn i of a round with turn i of the same round, never across rounds", () => {
    const a = {
      latency: [
        [10, 12, 14],
        [20, 22],
      ],
      runtimeCpuMsPerTurn: [null, null],
    };
    const b = {
      latency: [
        [9, 12, 10],
        [15, 30, 99],
      ],
      runtimeCpuMsPerTurn: [null, null],
    };
    expect(pairedDiffs(a, b)).toEqual([1, 0, 4, 5, -8]);
  });

  it("leaves out turns the other stack has no round for", () => {
    const a = { latency: [[10], [20]], runtimeCpuMsPerTurn: [] };
    const b = { latency: [[7]], runtimeCpuMsPerTurn: [] };
    expect(pairedDiffs(a, b)).toEqual([3]);
  });
});

describe("cpuPerTurn", () => {
  it("averages every round's reading, so one loop's whole clock ticks do not decide it", () => {
    // Three loops of 30 turns whose CPU read 10, 10 and 20 ms: 40 ms in 90 turns.
    const third = 10 / 30;
    const samples = { latency: [], runtimeCpuMsPerTurn: [third, third, 2 * third] };
    expect(cpuPerTurn(samples)).toBeCloseTo(40 / 90, 10);
  });

  it("skips unread rounds and is null when none was read", () => {
    expect(cpuPerTurn({ latency: [], runtimeCpuMsPerTurn: [null, 2, null, 4] })).toBe(3);
    expect(cpuPerTurn({ latency: [], runtimeCpuMsPerTurn: [null] })).toBeNull();
  });
});

describe("describeDiffs", () => {
  it("prints the count and signed quantiles", () => {
    expect(signed(0)).toBe("+0.00");
    expect(signed(-1.234)).toBe("-1.23");
    expect(describeDiffs([-1, 0, 1, 2, 3])).toBe("5 pairs, p50 +1.00, p90 +2.60, p99 +2.96");
  });
});

describe("quantileGap", () => {
  it("is one side's quantile minus the other's, not a quantile of the pairs", () => {
    // The spike of each side is in a different round: the paired differences' p99 sees both
    // (+100 and −100), the sides' own p99s are equal.
    const a = {
      latency: [
        [10, 110],
        [10, 10],
      ],
      runtimeCpuMsPerTurn: [],
    };
    const b = {
      latency: [
        [10, 10],
        [10, 110],
      ],
      runtimeCpuMsPerTurn: [],
    };
    expect(quantileGap(a, b, 0.99)).toBe(0);
    expect(quantileGap(a, b, 0.5)).toBe(0);
    expect(pairedDiffs(a, b)).toEqual([0, 100, 0, -100]);
    expect(describeGaps({ latency: [[3, 5]], runtimeCpuMsPerTurn: [] }, b)).toBe("p50 -6.00, p99 -102.02");
  });
});
