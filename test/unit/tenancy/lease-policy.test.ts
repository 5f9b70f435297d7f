/**
 * The lease sizing rule (src/tenancy/lease-policy.ts): what a tenant grants never lets the sum of
 * what is counted and held pass the limit, whatever the number of sessions and the order their
 * syncs arrive in; a session's allowance is never taken back; what waits is granted on top of what
 * the session holds; a fresh session gets what it waits for and no more; a busy one gets headroom
 * by its pace, bounded by its share.
 */
import { describe, expect, it } from "vitest";
import { type LeaseBudget, leaseAllowance } from "../../../src/tenancy/lease-policy.ts";

const budget = (over: Partial<LeaseBudget>): LeaseBudget => ({
  limit: 10,
  used: 0,
  others: 0,
  reserved: 0,
  allowance: 0,
  want: 0,
  recent: 0,
  ...over,
});

describe("leaseAllowance", () => {
  it("a fresh session gets what waits, no headroom", () => {
    expect(leaseAllowance(budget({ want: 1 }), 1, 1)).toBe(1);
  });

  it("a busy session gets headroom by its pace, at most half the rest over the sessions (unit at least)", () => {
    expect(leaseAllowance(budget({ want: 1, recent: 3 }), 1, 1)).toBe(1 + 3);
    expect(leaseAllowance(budget({ want: 1, recent: 100 }), 1, 1)).toBe(1 + 4); // floor(9 / 2)
    expect(leaseAllowance(budget({ want: 1, recent: 100 }), 9, 1)).toBe(1 + 1); // the unit
  });

  it("grants what waits on top of what the session holds (it may spend that meanwhile)", () => {
    expect(leaseAllowance(budget({ allowance: 3, want: 5 }), 1, 1)).toBe(3 + 5);
    expect(leaseAllowance(budget({ allowance: 3, want: 5, recent: 1 }), 1, 1)).toBe(3 + 5 + 1);
    expect(leaseAllowance(budget({ allowance: 3, want: 9 }), 1, 1)).toBe(10); // all there is
  });

  it("never takes an allowance back, never grants past the limit", () => {
    expect(leaseAllowance(budget({ allowance: 4, recent: 0 }), 5, 1)).toBe(4);
    expect(leaseAllowance(budget({ used: 8, want: 5 }), 1, 1)).toBe(2);
    expect(leaseAllowance(budget({ used: 10, want: 1 }), 1, 1)).toBe(0);
  });

  it("a request larger than the whole limit only into an empty window", () => {
    expect(leaseAllowance(budget({ want: 50 }), 1, 1, true)).toBe(50);
    expect(leaseAllowance(budget({ want: 50, used: 1 }), 1, 1, true)).toBe(9);
    expect(leaseAllowance(budget({ want: 50 }), 1, 1, false)).toBe(10);
  });

  it("keeps counted + held within the limit over any order of many sessions' syncs", () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    for (const sessions of [1, 5, 200]) {
      const limit = 10;
      const held = new Array<number>(sessions).fill(0);
      let used = 0;
      for (let step = 0; step < 5_000; step++) {
        const s = random(sessions);
        // The session spends some of its allowance (reported as used at this sync) …
        const spent = random(held[s]! + 1);
        held[s]! -= spent;
        used += spent;
        // … and asks for what waits, at its pace.
        const others = held.reduce((a, b) => a + b, 0) - held[s]!;
        const before = used + others + held[s]!;
        held[s] = leaseAllowance(
          { limit, used, others, reserved: 0, allowance: held[s]!, want: random(3), recent: random(4) },
          sessions,
          1,
        );
        expect(used + others + held[s]!).toBeLessThanOrEqual(Math.max(limit, before));
      }
      expect(used).toBeLessThanOrEqual(limit);
    }
  });
});
