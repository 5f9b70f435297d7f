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
  type StackSamples,
  signed,
} from "../../bench/paired-loops.ts";

/** A stack's samples with these turn latencies, one list per round (rounds 0, 1, …). */
function stack(latency: number[][], runtimeCpuMsPerTurn: (number | null)[] = []): StackSamples {
  const loops = new Map(
    latency.map((turns, round) => [round, { turns: turns.map((latencyMs) => ({ latencyMs })) }]),
  );
  return { loops, runtimeCpuMsPerTurn };
}

describe("pairedDiffs", () => {
  it("pairs turn i of a round with turn i of the same round, never across rounds", () => {
    const a = stack(
      [
        [10, 12, 14],
        [20, 22],
      ],
      [null, null],
    );
    const b = stack(
      [
        [9, 12, 10],
        [15, 30, 99],
      ],
      [null, null],
    );
    expect(pairedDiffs(a, b)).toEqual([1, 0, 4, 5, -8]);
  });

  it("leaves out turns the other stack has no round for", () => {
    const a = stack([[10], [20]], []);
    const b = stack([[7]], []);
    expect(pairedDiffs(a, b)).toEqual([3]);
  });
});

describe("cpuPerTurn", () => {
  it("averages every round's reading, so one loop's whole clock ticks do not decide it", () => {
    // Three loops of 30 turns whose CPU read 10, 10 and 20 ms: 40 ms in 90 turns.
    const third = 10 / 30;
    const samples = stack([], [third, third, 2 * third]);
    expect(cpuPerTurn(samples)).toBeCloseTo(40 / 90, 10);
  });

  it("skips unread rounds and is null when none was read", () => {
    expect(cpuPerTurn(stack([], [null, 2, null, 4]))).toBe(3);
    expect(cpuPerTurn(stack([], [null]))).toBeNull();
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
    const a = stack(
      [
        [10, 110],
        [10, 10],
      ],
      [],
    );
    const b = stack(
      [
        [10, 10],
        [10, 110],
      ],
      [],
    );
    expect(quantileGap(a, b, 0.99)).toBe(0);
    expect(quantileGap(a, b, 0.5)).toBe(0);
    expect(pairedDiffs(a, b)).toEqual([0, 100, 0, -100]);
    expect(describeGaps(stack([[3, 5]], []), b)).toBe("p50 -6.00, p99 -102.02");
  });
});
