import { describe, expect, it } from "vitest";
import { LaneScheduler, MAX_PENDING_BYTES, MAX_QUEUED } from "../../../src/session/lanes.ts";

const MiB = 1024 * 1024;

/** A job that runs until `finish()` is called. */
function blocker() {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return { job: () => done, finish };
}

describe("lane scheduler caps", () => {
  it(`queues at most ${MAX_QUEUED} creates per connection, then answers 429 websocket_queue_full`, async () => {
    const lanes = new LaneScheduler();
    const running = blocker();
    lanes.enqueue(null, running.job);
    for (let i = 0; i < MAX_QUEUED; i++) {
      expect(lanes.admit(null)).toBeNull();
      lanes.enqueue(null, async () => {});
    }
    expect(lanes.waitingCreates).toBe(MAX_QUEUED);
    const refused = lanes.admit(null);
    expect([refused?.status, refused?.code, refused?.type]).toEqual([
      429,
      "websocket_queue_full",
      "rate_limit_error",
    ]);
    running.finish();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(lanes.waitingCreates).toBe(0);
    expect(lanes.admit(null)).toBeNull();
  });

  it("bounds the bytes of creates admitted and not finished, always admitting one", async () => {
    const lanes = new LaneScheduler();
    const big = blocker();
    expect(lanes.admit(null, 30 * MiB)).toBeNull(); // alone: admitted whatever its size
    lanes.enqueue(null, big.job, 30 * MiB);
    expect(lanes.admit("other", 1 * MiB)).toBeNull();
    expect(lanes.admit("other", MAX_PENDING_BYTES - 30 * MiB + 1)?.code).toBe("websocket_queue_full");
    big.finish();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(lanes.admit("other", 30 * MiB)).toBeNull();
  });

  it("reports a bad stream_id before a full queue", () => {
    const lanes = new LaneScheduler(16, 32, 0);
    expect(lanes.admit("bad id!")?.code).toBe("invalid_stream_id");
    expect(lanes.admit("good")?.code).toBe("websocket_queue_full");
  });
});
