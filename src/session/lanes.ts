/**
 * Lane scheduling of one WebSocket connection (README "Protocol notes and extensions", lanes). Owns the ordering rules:
 * - the default lane (no `stream_id`) and each named lane run their responses strictly in order,
 *   one at a time, queueing later `response.create`s instead of rejecting them;
 * - different lanes run concurrently, at most `maxInFlight` (16) responses across all lanes, the
 *   rest waiting in arrival order;
 * - at most `maxNamedLanes` (32) distinct `stream_id`s per connection.
 */
import { STREAM_ID_PATTERN } from "../protocol/create-request.ts";
import { type ApiError, invalidRequest } from "../protocol/errors.ts";

/** In-flight responses per connection, across lanes. */
export const MAX_IN_FLIGHT = 16;
/** Distinct named `stream_id`s per connection. */
export const MAX_NAMED_LANES = 32;

interface Lane {
  queue: Array<() => Promise<unknown>>;
  running: boolean;
}

/** FIFO lanes with a shared in-flight cap. */
export class LaneScheduler {
  private readonly lanes = new Map<string, Lane>();
  private readonly waiting: Lane[] = [];
  private inFlight = 0;
  private readonly maxInFlight: number;
  private readonly maxNamedLanes: number;

  constructor(maxInFlight = MAX_IN_FLIGHT, maxNamedLanes = MAX_NAMED_LANES) {
    this.maxInFlight = maxInFlight;
    this.maxNamedLanes = maxNamedLanes;
  }

  /**
   * Checks a `stream_id` before its create is queued.
   * @returns null when acceptable, else the 400 `invalid_stream_id` / `websocket_stream_limit_reached` error.
   */
  admit(streamId: string | null | undefined): ApiError | null {
    if (streamId === undefined || streamId === null) return null;
    if (!STREAM_ID_PATTERN.test(streamId)) {
      return invalidRequest(
        "Invalid 'stream_id': it must be 1-256 characters of letters, digits, '_', '-' or '.'. Omit it for the default lane.",
        "stream_id",
        "invalid_stream_id",
      );
    }
    const named = this.lanes.size - (this.lanes.has("") ? 1 : 0);
    if (!this.lanes.has(`#${streamId}`) && named >= this.maxNamedLanes) {
      return invalidRequest(
        `This connection reached the limit of ${this.maxNamedLanes} distinct stream IDs.`,
        "stream_id",
        "websocket_stream_limit_reached",
      );
    }
    return null;
  }

  /** Queues `job` on the lane of `streamId` (null/undefined = default lane). Never throws. */
  enqueue(streamId: string | null | undefined, job: () => Promise<unknown>): void {
    const key = streamId ? `#${streamId}` : "";
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { queue: [], running: false };
      this.lanes.set(key, lane);
    }
    lane.queue.push(job);
    this.pump(lane);
  }

  /** Responses running now (for tests and diagnostics). */
  get running(): number {
    return this.inFlight;
  }

  private pump(lane: Lane): void {
    if (lane.running || lane.queue.length === 0) return;
    if (this.inFlight >= this.maxInFlight) {
      if (!this.waiting.includes(lane)) this.waiting.push(lane);
      return;
    }
    const job = lane.queue.shift()!;
    lane.running = true;
    this.inFlight++;
    void job()
      .catch(() => {}) // jobs report their own errors; a failure must not stall the lane
      .finally(() => {
        lane.running = false;
        this.inFlight--;
        const next = this.waiting.shift();
        if (next) this.pump(next);
        this.pump(lane);
      });
  }
}
