import { describe, expect, it } from "vitest";
import {
  BYTE_BURST,
  BYTES_PER_SECOND,
  FRAME_BURST,
  FRAMES_PER_SECOND,
  FrameBudget,
  frameBudgetExceeded,
} from "../../../src/session/frame-budget.ts";

const tiny = () => 10;

describe("a socket's frame budget", () => {
  it(`admits ${FRAME_BURST} frames at once, then refuses until it refills at ${FRAMES_PER_SECOND} a second`, () => {
    const budget = new FrameBudget(1_000);
    for (let i = 0; i < FRAME_BURST; i++) expect(budget.take(tiny, 1_000)).toBe(true);
    expect(budget.take(tiny, 1_000)).toBe(false);
    // Refused frames take nothing: one frame's worth of time later, exactly one more is admitted.
    for (let i = 0; i < 100; i++) expect(budget.take(tiny, 1_000)).toBe(false);
    const oneFrame = 1000 / FRAMES_PER_SECOND;
    expect(budget.take(tiny, 1_000 + oneFrame)).toBe(true);
    expect(budget.take(tiny, 1_000 + oneFrame)).toBe(false);
    // A second later a second's worth is back, never more than the burst.
    const later = 1_000 + oneFrame + 1_000;
    let admitted = 0;
    while (budget.take(tiny, later)) admitted++;
    expect(admitted).toBe(FRAMES_PER_SECOND);
    let afterIdle = 0;
    while (budget.take(tiny, later + 3_600_000)) afterIdle++;
    expect(afterIdle).toBe(FRAME_BURST);
  });

  it("does not measure a frame it refuses for the frame count", () => {
    const budget = new FrameBudget(0);
    for (let i = 0; i < FRAME_BURST; i++) budget.take(tiny, 0);
    let measured = 0;
    expect(
      budget.take(() => {
        measured++;
        return 10;
      }, 0),
    ).toBe(false);
    expect(measured).toBe(0);
  });

  it(`admits ${BYTE_BURST} bytes at once, then ${BYTES_PER_SECOND} a second; an oversized frame takes the whole burst`, () => {
    const budget = new FrameBudget(0);
    expect(budget.take(() => BYTE_BURST - 5, 0)).toBe(true);
    expect(budget.take(() => 6, 0)).toBe(false);
    expect(budget.take(() => 5, 0)).toBe(true);
    expect(budget.take(() => BYTES_PER_SECOND, 999)).toBe(false);
    expect(budget.take(() => BYTES_PER_SECOND, 1_000)).toBe(true);
    // A frame larger than the burst is read (and refused for its size downstream) once the bucket is full.
    const fresh = new FrameBudget(0);
    expect(fresh.take(() => BYTE_BURST * 2, 0)).toBe(true);
    expect(fresh.take(() => 1, 0)).toBe(false);
  });

  it("refuses with a 429 websocket_rate_limit_exceeded that says when to retry", () => {
    expect([frameBudgetExceeded.status, frameBudgetExceeded.type, frameBudgetExceeded.code]).toEqual([
      429,
      "rate_limit_error",
      "websocket_rate_limit_exceeded",
    ]);
    expect(frameBudgetExceeded.headers).toEqual({ "retry-after": "1" });
  });
});
