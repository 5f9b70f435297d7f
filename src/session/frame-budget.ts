/**
 * The frame budget of one client WebSocket (docs/tenancy.md, "A flood on one socket"): a token
 * bucket of frames and one of bytes, refilled continuously, taken from for every frame the socket
 * sends — whatever its type, field order, lane or validity — before anything else reads it.
 * Owns the numbers and the refusal:
 * - `FRAME_BURST` frames at once, then `FRAMES_PER_SECOND`; `BYTE_BURST` bytes at once (room for
 *   two of the largest frames, `MAX_REQUEST_BYTES`), then `BYTES_PER_SECOND`. A client within the
 *   socket's other caps (16 in flight, 64 queued creates, lanes.ts) never comes near them;
 * - a frame over budget takes nothing and is refused with the one 429
 *   `websocket_rate_limit_exceeded` error (its frame rendered once per connection, flood-screen.ts).
 * Invariant: however many frames a socket sends, at most `FRAME_BURST + FRAMES_PER_SECOND × t`
 * of them (and `BYTE_BURST + BYTES_PER_SECOND × t` bytes) are parsed in any t seconds; every
 * other frame costs only the screen.
 */
import { ApiError } from "../protocol/errors.ts";
import { MAX_REQUEST_BYTES } from "../protocol/size-limits.ts";

const MiB = 1024 * 1024;

/** Frames a socket may send at once. */
export const FRAME_BURST = 256;
/** Frames a socket may send per second, sustained. */
export const FRAMES_PER_SECOND = 128;
/** Bytes (UTF-8) a socket may send at once: two of the largest requests. */
export const BYTE_BURST = 2 * MAX_REQUEST_BYTES;
/** Bytes a socket may send per second, sustained. */
export const BYTES_PER_SECOND = 16 * MiB;

/** 429 `websocket_rate_limit_exceeded`: the frame was refused unread; the socket stays open. */
export const frameBudgetExceeded = new ApiError(
  429,
  {
    type: "rate_limit_error",
    code: "websocket_rate_limit_exceeded",
    message: `This connection sent frames faster than it may (${FRAME_BURST} at once, then ${FRAMES_PER_SECOND} a second; ${BYTE_BURST / MiB} MiB at once, then ${BYTES_PER_SECOND / MiB} MiB a second): this frame was not read. Wait before sending more.`,
    param: null,
  },
  { "retry-after": "1" },
);

/** The two token buckets of one socket; full when the socket opens (or its session wakes). */
export class FrameBudget {
  private frames = FRAME_BURST;
  private bytes = BYTE_BURST;
  private at: number;

  /** @param now the clock, in ms (`Date.now()`). */
  constructor(now: number) {
    this.at = now;
  }

  /**
   * Takes one frame of `size` bytes (a frame larger than `BYTE_BURST` takes all of it, so it is
   * read and refused for its size, not for the rate).
   * @returns false, taking nothing, when the socket is over its budget.
   */
  take(size: () => number, now: number): boolean {
    const elapsed = Math.max(0, now - this.at) / 1000;
    this.at = Math.max(this.at, now);
    this.frames = Math.min(FRAME_BURST, this.frames + elapsed * FRAMES_PER_SECOND);
    this.bytes = Math.min(BYTE_BURST, this.bytes + elapsed * BYTES_PER_SECOND);
    if (this.frames < 1) return false;
    const bytes = Math.min(size(), BYTE_BURST);
    if (this.bytes < bytes) return false;
    this.frames -= 1;
    this.bytes -= bytes;
    return true;
  }
}
