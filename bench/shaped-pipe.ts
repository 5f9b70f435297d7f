/**
 * One direction of a shaped TCP connection: bytes read from `source` are written to `dest` when a
 * link of the given latency and bandwidth would have delivered them.
 * Model (a FIFO link: serialization at the bandwidth, then propagation): a slice of n bytes that
 * arrives at t starts transmitting at max(t, open, previous slice's transmit end), finishes
 * n × 8 / bandwidth later, and is delivered one-way latency after that; that is,
 * delivery = max(arrival + latency, previous delivery) + n × 8 / bandwidth: never before the
 * previous slice (ordering holds) and never faster than the bandwidth allows. End of stream (FIN)
 * uses no bandwidth and is delivered one latency after the last byte's transmit end.
 * Owns the queue, the timer that drains it, and backpressure: when more than `highWaterBytes` are
 * waiting (undelivered plus `dest`'s write buffer), `source` is paused until half of that drained,
 * so memory per direction stays bounded whatever the peers do.
 * Invariant: delivery times are computed from the schedule, never from when a timer actually
 * fired, so a late timer delays a delivery but never shifts the ones after it.
 */
import type { Socket } from "node:net";

/** Slice size in bytes: about three TCP segments, so a large body arrives progressively. */
const SLICE_BYTES = 4_096;
/**
 * Slices due within this many ms are written now: Node timers have ms granularity, so waiting
 * for them would make every delivery up to 1 ms late; this centres the error on zero.
 */
const EARLY_MS = 0.5;

/** Delivery accuracy and volume, summed over every pipe that shares the object. */
export interface PipeCounters {
  /** Payload bytes read from the source. */
  bytes: number;
  /** Timer-driven writes to the destination. */
  deliveries: number;
  /** Sum over deliveries of (actual − scheduled) time of the delivery's first slice, ms. */
  lateMsSum: number;
  /** Deliveries more than 2 ms after their scheduled time (a busy event loop). */
  lateOver2Ms: number;
}

/** Creates zeroed counters. */
export function newPipeCounters(): PipeCounters {
  return { bytes: 0, deliveries: 0, lateMsSum: 0, lateOver2Ms: 0 };
}

/** Configuration of one direction. */
export interface ShapedPipeOptions {
  source: Socket;
  dest: Socket;
  /** One-way latency, ms. */
  latencyMs: number;
  /** Bandwidth, bits per second (> 0). */
  bitsPerSecond: number;
  /** `performance.now()` before which no byte may start transmitting (connection setup), ms. */
  openAt: number;
  /** Bytes waiting before `source` is paused. */
  highWaterBytes: number;
  counters: PipeCounters;
}

interface Pending {
  /** Scheduled delivery, `performance.now()` ms. */
  at: number;
  /** Null marks end of stream. */
  data: Buffer | null;
}

/** One shaped direction; feed it with `push`/`end`, stop it with `abort`. */
export class ShapedPipe {
  readonly #options: ShapedPipeOptions;
  readonly #queue: Pending[] = [];
  /** When the link finishes transmitting the last scheduled byte, ms. */
  #txFreeAt = 0;
  #queuedBytes = 0;
  #timer: NodeJS.Timeout | null = null;
  #paused = false;
  #ended = false;
  #aborted = false;

  /** Wires `dest`'s drain to backpressure; the caller forwards `source`'s data and end. */
  constructor(options: ShapedPipeOptions) {
    this.#options = options;
    options.dest.on("drain", () => this.#maybeResume());
  }

  /** Schedules `chunk` (bytes read from `source` just now). Ignored after `end`/`abort`. */
  push(chunk: Buffer): void {
    if (this.#ended || this.#aborted) return;
    const { latencyMs, bitsPerSecond, openAt, counters } = this.#options;
    counters.bytes += chunk.length;
    const now = performance.now();
    for (let offset = 0; offset < chunk.length; offset += SLICE_BYTES) {
      const slice = chunk.subarray(offset, offset + SLICE_BYTES);
      const start = Math.max(now, openAt, this.#txFreeAt);
      this.#txFreeAt = start + (slice.length * 8 * 1000) / bitsPerSecond;
      this.#queue.push({ at: this.#txFreeAt + latencyMs, data: slice });
      this.#queuedBytes += slice.length;
    }
    if (!this.#paused && this.#backlog() > this.#options.highWaterBytes) {
      this.#paused = true;
      this.#options.source.pause();
    }
    this.#arm();
  }

  /** Schedules end of stream after every byte pushed so far. Idempotent. */
  end(): void {
    if (this.#ended || this.#aborted) return;
    this.#ended = true;
    const at = Math.max(performance.now(), this.#options.openAt, this.#txFreeAt) + this.#options.latencyMs;
    this.#queue.push({ at, data: null });
    this.#arm();
  }

  /** Drops everything not yet delivered (the connection is gone). Idempotent. */
  abort(): void {
    this.#aborted = true;
    this.#queue.length = 0;
    this.#queuedBytes = 0;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }

  #backlog(): number {
    return this.#queuedBytes + this.#options.dest.writableLength;
  }

  #maybeResume(): void {
    if (this.#paused && !this.#aborted && this.#backlog() <= this.#options.highWaterBytes / 2) {
      this.#paused = false;
      this.#options.source.resume();
    }
  }

  #arm(): void {
    const next = this.#queue[0];
    if (this.#timer || !next || this.#aborted) return;
    const delay = next.at - performance.now();
    if (delay <= EARLY_MS) {
      this.#deliver();
      return;
    }
    this.#timer = setTimeout(
      () => {
        this.#timer = null;
        this.#deliver();
      },
      Math.ceil(delay - EARLY_MS),
    );
  }

  /** Writes every slice that is due (as one write) and, if it is due, the end of stream. */
  #deliver(): void {
    const { dest, counters } = this.#options;
    const now = performance.now();
    const first = this.#queue[0];
    if (!first) return;
    const due: Buffer[] = [];
    let end = false;
    while (this.#queue[0] && this.#queue[0].at <= now + EARLY_MS) {
      const item = this.#queue.shift()!;
      if (item.data) {
        due.push(item.data);
        this.#queuedBytes -= item.data.length;
      } else {
        end = true;
      }
    }
    if (due.length > 0 || end) {
      const late = now - first.at;
      counters.deliveries += 1;
      counters.lateMsSum += late;
      if (late > 2) counters.lateOver2Ms += 1;
    }
    if (!dest.destroyed && dest.writable) {
      if (due.length > 0) dest.write(due.length === 1 ? due[0]! : Buffer.concat(due));
      if (end) dest.end();
    }
    this.#maybeResume();
    this.#arm();
  }
}
