/**
 * Lane scheduling of one WebSocket connection (docs/protocol.md, lanes). Owns the ordering rules:
 * - the default lane (no `stream_id`) and each named lane run their responses strictly in order,
 *   one at a time, queueing later `response.create`s instead of rejecting them;
 * - different lanes run concurrently, at most `maxInFlight` (16) responses across all lanes, the
 *   rest waiting in arrival order;
 * - at most `maxNamedLanes` (32) distinct `stream_id`s per connection;
 * - at most `MAX_QUEUED` (64) creates waiting (not yet started) per connection, and at most
 *   `MAX_PENDING_BYTES` of frames admitted and not finished (queued or running): a client
 *   that sends faster than its responses finish gets `websocket_queue_full` (the socket stays
 *   open) instead of growing the session's memory without bound (a Durable Object has 128 MB).
 */
import { STREAM_ID_PATTERN } from "../protocol/create-request.ts";
import { ApiError, invalidRequest } from "../protocol/errors.ts";

/** In-flight responses per connection, across lanes. */
export const MAX_IN_FLIGHT = 16;
/** Distinct named `stream_id`s per connection. */
export const MAX_NAMED_LANES = 32;
/** Creates waiting to start, per connection, across lanes. */
export const MAX_QUEUED = 64;
/** Bytes of create frames admitted and not finished, per connection (one largest request fits). */
export const MAX_PENDING_BYTES = 32 * 1024 * 1024;

interface Job {
  run: () => Promise<unknown>;
  bytes: number;
}

interface Lane {
  queue: Job[];
  running: boolean;
}

/** 429 `websocket_queue_full`: too many creates waiting on this connection. */
function queueFull(reason: string): ApiError {
  return new ApiError(429, {
    type: "rate_limit_error",
    code: "websocket_queue_full",
    message: `This connection has ${reason}; wait for earlier responses to finish before sending more response.create events.`,
    param: null,
  });
}

/** FIFO lanes with a shared in-flight cap. */
export class LaneScheduler {
  private readonly lanes = new Map<string, Lane>();
  private readonly waiting: Lane[] = [];
  private inFlight = 0;
  private queued = 0;
  private pendingBytes = 0;
  private readonly maxInFlight: number;
  private readonly maxNamedLanes: number;
  private readonly maxQueued: number;
  /** The one error of a full queue (made once: a flood of creates allocates no error per frame). */
  readonly queueFullError: ApiError;

  constructor(maxInFlight = MAX_IN_FLIGHT, maxNamedLanes = MAX_NAMED_LANES, maxQueued = MAX_QUEUED) {
    this.maxInFlight = maxInFlight;
    this.maxNamedLanes = maxNamedLanes;
    this.maxQueued = maxQueued;
    this.queueFullError = queueFull(`${maxQueued} response.create events queued`);
  }

  /** True while no create can be queued, whatever its lane or size (`MAX_QUEUED` are waiting). */
  get full(): boolean {
    return this.queued >= this.maxQueued;
  }

  /**
   * Checks a create before it is queued: its `stream_id`, and room for it on this connection.
   * @param bytes the size of its frame.
   * @returns null when acceptable, else the 400 `invalid_stream_id` /
   *   `websocket_stream_limit_reached` or 429 `websocket_queue_full` error.
   */
  admit(streamId: string | null | undefined, bytes = 0): ApiError | null {
    const laneError = this.checkStreamId(streamId);
    if (laneError) return laneError;
    if (this.queued >= this.maxQueued) return this.queueFullError;
    // Always room for one create, whatever its size (requests are capped on their own).
    if (this.pendingBytes > 0 && this.pendingBytes + bytes > MAX_PENDING_BYTES) {
      return queueFull(`${MAX_PENDING_BYTES} bytes of response.create events pending`);
    }
    return null;
  }

  /** The error of an unacceptable `stream_id`, or null. */
  private checkStreamId(streamId: string | null | undefined): ApiError | null {
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

  /**
   * Queues `job` on the lane of `streamId` (null/undefined = default lane). Never throws.
   * @param bytes the size of its frame, counted against `MAX_PENDING_BYTES` until the job ends.
   */
  enqueue(streamId: string | null | undefined, job: () => Promise<unknown>, bytes = 0): void {
    const key = streamId ? `#${streamId}` : "";
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { queue: [], running: false };
      this.lanes.set(key, lane);
    }
    lane.queue.push({ run: job, bytes });
    this.queued++;
    this.pendingBytes += bytes;
    this.pump(lane);
  }

  /** Responses running now (for tests and diagnostics). */
  get running(): number {
    return this.inFlight;
  }

  /** Creates waiting to start (for tests and diagnostics). */
  get waitingCreates(): number {
    return this.queued;
  }

  private pump(lane: Lane): void {
    if (lane.running || lane.queue.length === 0) return;
    if (this.inFlight >= this.maxInFlight) {
      if (!this.waiting.includes(lane)) this.waiting.push(lane);
      return;
    }
    const job = lane.queue.shift()!;
    this.queued--;
    lane.running = true;
    this.inFlight++;
    void job
      .run()
      .catch(() => {}) // jobs report their own errors; a failure must not stall the lane
      .finally(() => {
        lane.running = false;
        this.inFlight--;
        this.pendingBytes -= job.bytes;
        const next = this.waiting.shift();
        if (next) this.pump(next);
        this.pump(lane);
      });
  }
}
