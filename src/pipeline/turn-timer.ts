/**
 * Per-stage timing of one turn (issue #8 item 8). Owns the stage names and how a turn's times are
 * reported: `stages()` gives each measured stage in ms, plus `edge` (Deltagate's own work before
 * the upstream is asked: parse + queue + state + render + stages + safety) and `total` (from the
 * frame or request to the committed terminal event).
 * Who marks what: the transport `parse`, `queue` and `think`; the turn engine `state`, `render`,
 * `stages` and `commit`; the timing stage (src/pipeline/timing-stage.ts) `upstream_connect`,
 * `upstream_first_event`, `generation` and `relay`; a safety stage adds `safety`.
 * Stages overlap where work overlaps: `relay` (Deltagate's time per upstream event, summed) runs
 * while the upstream keeps generating, so it is part of `generation`'s wall time, not added to it.
 * Caveat: in production Workers the clock advances only across I/O
 * (https://developers.cloudflare.com/workers/reference/security-model/#step-1-disallow-timers-and-multi-threading),
 * so purely CPU-bound stages (parse, render, commit) read 0 there; locally (workerd) they are real.
 * Besides times, a turn carries what it was (issue #18.4, `TurnFacts`): whether the client chained,
 * whether a resend matched a chain (and how many of its items), and what went upstream.
 * A sampled turn also carries its trace (`trace`, src/pipeline/turn-trace.ts): whoever marks a stage
 * opens and ends its span there; null (the rule) costs one check.
 * Invariant: times only grow; a stage never measured is absent (not 0).
 */

/** The stages a turn may report, in ms. */
export type TimingStage =
  | "think"
  | "parse"
  | "queue"
  | "state"
  | "render"
  | "stages"
  | "safety"
  | "upstream_connect"
  | "upstream_first_event"
  | "generation"
  | "relay"
  | "commit";

/** Stages that are Deltagate's own work before the upstream is asked (their sum is `edge`). */
const EDGE: readonly TimingStage[] = ["parse", "queue", "state", "render", "stages", "safety"];

/** A turn's report: each measured stage, `edge` and `total`, in ms (0.01 ms resolution). */
export type TimingReport = Partial<Record<TimingStage | "edge" | "total", number>>;

/** What a turn was, besides its times (reported with them, src/pipeline/turn-timing.ts). */
export interface TurnFacts {
  /** The client named a `previous_response_id`. */
  chained?: boolean;
  /**
   * Leading input items of a full resend that matched a chain the session holds (src/resend/):
   * the turn continued that chain with the rest. 0 when nothing matched.
   */
  resend_matched_items?: number;
  /** Input items of the last request sent upstream (a delta counts only its new items). */
  upstream_input_items?: number;
  /** UTF-8 bytes of the last request body or frame sent upstream. */
  upstream_request_bytes?: number;
  /**
   * The turn's usage as the ledger booked it (src/context/turn-cost.ts): input tokens (cached and
   * cache-write ones included), those read from and written to the provider's prompt cache, output
   * tokens (reasoning included).
   */
  input_tokens?: number;
  cached_tokens?: number;
  cache_write_tokens?: number;
  output_tokens?: number;
  /** Its cost in USD (`PRICES`); null when its model has no price. */
  cost_usd?: number | null;
}

/** The stages that get a span of their own in a turn's trace (src/pipeline/turn-trace.ts). */
export type SpanStage = "admission" | "context" | "safety" | "upstream_first_event" | "commit";

/** The trace of a sampled turn, as the code that marks its stages sees it (src/pipeline/turn-trace.ts `TurnTrace`). */
export interface TurnSpans {
  /** Opens the span of `stage`; the caller ends it where the stage ends. */
  start(stage: SpanStage): { end(): void };
  /** The model the turn's admission settled on (an alias resolved). */
  admitted(model: string): void;
  /** The response the turn produced (id, status, usage), told at its commit. */
  response(id: string, status: string, usage: unknown): void;
  /** Ends the turn's span with its report; later calls change nothing. */
  finish(stages: TimingReport, facts: TurnFacts, error: string | null): void;
}

/** The stopwatch of one turn. */
export class TurnTimer {
  /** The turn's trace when its invocation is sampled, else null (set by the transport). */
  trace: TurnSpans | null = null;
  private readonly now: () => number;
  private readonly startedAt: number;
  private lapAt: number;
  private endedAt: number | null = null;
  private readonly times = new Map<TimingStage, number>();
  private readonly known: TurnFacts = {};

  /**
   * @param now monotonic clock in ms (default `performance.now`).
   * @param startedAt when the turn's frame or request arrived (default: now).
   */
  constructor(now: () => number = () => performance.now(), startedAt?: number) {
    this.now = now;
    this.startedAt = startedAt ?? now();
    this.lapAt = this.startedAt;
  }

  /** The clock's current time (for stages that measure spans themselves). */
  clock(): number {
    return this.now();
  }

  /** Adds the time since the previous lap (or the start) to `stage`, and starts a new lap. */
  lap(stage: TimingStage): void {
    const at = this.now();
    this.add(stage, at - this.lapAt);
    this.lapAt = at;
  }

  /** Starts a new lap without charging the time since the previous one to any stage. */
  skip(): void {
    this.lapAt = this.now();
  }

  /** Adds `ms` to `stage` (negative or non-finite values are ignored). */
  add(stage: TimingStage, ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    this.times.set(stage, (this.times.get(stage) ?? 0) + ms);
  }

  /** Runs `work`, charging its duration to `stage`. */
  measure<T>(stage: TimingStage, work: () => T): T {
    const at = this.now();
    try {
      return work();
    } finally {
      this.add(stage, this.now() - at);
      this.lapAt = this.now();
    }
  }

  /** Records facts about the turn (later values win). */
  note(facts: TurnFacts): void {
    Object.assign(this.known, facts);
  }

  /** The facts recorded so far. */
  facts(): TurnFacts {
    return { ...this.known };
  }

  /** Marks the end of the turn (`total` stops here); later calls change nothing. */
  end(): void {
    this.endedAt ??= this.now();
  }

  /** The measured stages so far, `edge` and `total`. */
  stages(): TimingReport {
    const report: TimingReport = {};
    for (const [stage, ms] of this.times) report[stage] = round(ms);
    const edge = EDGE.reduce((sum, stage) => sum + (this.times.get(stage) ?? 0), 0);
    report.edge = round(edge);
    report.total = round((this.endedAt ?? this.now()) - this.startedAt);
    return report;
  }
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
