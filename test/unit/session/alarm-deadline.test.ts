/**
 * The alarm's deadline arithmetic (src/session/alarm-deadline.ts): the earliest of a socket's
 * lifetime end, a grace window's end and a retention expiry; none when nothing is due; an armed
 * alarm is only ever moved earlier.
 */
import { describe, expect, it } from "vitest";
import { type DeadlineInputs, mustArm, nextDeadline } from "../../../src/session/alarm-deadline.ts";

const NONE: DeadlineInputs = {
  socketsOpenedAt: [],
  maxConnectionMs: 3_600_000,
  oldestStored: null,
  retentionMs: 30 * 86_400_000,
  earliestRelease: null,
  storeFalseGraceMs: 300_000,
};

describe("nextDeadline", () => {
  it("is null when no socket is open and nothing is stored or released", () => {
    expect(nextDeadline(NONE)).toBeNull();
  });

  it("is the lifetime end of the oldest open socket", () => {
    expect(nextDeadline({ ...NONE, socketsOpenedAt: [5_000, 1_000, 9_000] })).toBe(1_000 + 3_600_000);
  });

  it("is the retention expiry of the oldest store:true response", () => {
    expect(nextDeadline({ ...NONE, oldestStored: 2_000 })).toBe(2_000 + 30 * 86_400_000);
  });

  it("is the end of the earliest grace window", () => {
    expect(nextDeadline({ ...NONE, earliestRelease: 7_000 })).toBe(7_000 + 300_000);
  });

  it("takes the earliest of all three", () => {
    const inputs = { ...NONE, socketsOpenedAt: [0], oldestStored: 0, earliestRelease: 3_400_000 };
    expect(nextDeadline(inputs)).toBe(3_600_000); // the socket's lifetime ends first
    expect(nextDeadline({ ...inputs, earliestRelease: 3_000_000 })).toBe(3_300_000); // then the window
    expect(nextDeadline({ ...inputs, retentionMs: 1_000 })).toBe(1_000); // then retention
  });

  it("counts a window of 0 from the release itself", () => {
    expect(nextDeadline({ ...NONE, earliestRelease: 4_000, storeFalseGraceMs: 0 })).toBe(4_000);
  });
});

describe("mustArm", () => {
  it("arms when none is set, moves an alarm earlier, never later", () => {
    expect(mustArm(null, 10)).toBe(true);
    expect(mustArm(20, 10)).toBe(true);
    expect(mustArm(10, 20)).toBe(false);
    expect(mustArm(10, 10)).toBe(false);
  });
});
