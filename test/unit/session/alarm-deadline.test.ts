/**
 * The alarm's arming rule (src/session/alarm-deadline.ts): an armed alarm is only ever moved
 * earlier. The deadlines themselves are the lifecycle parts' (test/unit/session/lifecycle.test.ts).
 */
import { describe, expect, it } from "vitest";
import { mustArm } from "../../../src/session/alarm-deadline.ts";

describe("mustArm", () => {
  it("arms when none is set, moves an alarm earlier, never later", () => {
    expect(mustArm(null, 10)).toBe(true);
    expect(mustArm(20, 10)).toBe(true);
    expect(mustArm(10, 20)).toBe(false);
    expect(mustArm(10, 10)).toBe(false);
  });
});
