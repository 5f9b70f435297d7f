/**
 * The contract of a turn stage: one concern (context window, usage, later safety or timing) that
 * decorates the `Upstream` a turn opens. Owns what a stage may see of a turn (`PreparedTurn`).
 * Invariants: a stage runs once per turn, after the turn's context is built and validated and
 * before anything is stored or sent; it may reject the turn by throwing an `ApiError` from `wrap`
 * (nothing is stored then; `open()` runs after the turn was announced, so an error there ends the
 * response with `response.failed`), and whatever it returns must keep the `Upstream` contract
 * (src/upstream/upstream.ts): `open()` rejects with `UpstreamError` before the first event, the
 * stream throws it after, and a wrapped stream forwards its optional `usage`.
 */
import type { TurnContext } from "../context/counted-context.ts";
import type { CreateRequest } from "../protocol/create-request.ts";
import type { Upstream } from "../upstream/upstream.ts";
import type { TurnTimer } from "./turn-timer.ts";

/** What every stage knows about the turn it decorates. */
export interface PreparedTurn {
  /** The id this turn's response gets (known before anything is sent). */
  readonly responseId: string;
  /** The validated request. */
  readonly request: CreateRequest;
  /** history(previous response) + the turn's input, with sizes, before any fitting. */
  readonly context: TurnContext;
  /** The turn's stopwatch: a stage that takes time on the critical path reports it here. */
  readonly timer: TurnTimer;
  /**
   * The client ended its input with `compaction_trigger` (taken off the input: never stored nor
   * echoed; src/compaction/compaction-items.ts).
   */
  readonly compactionTrigger?: boolean;
}

/** One stage around a turn's upstream. */
export interface TurnStage {
  /** Short name, for logs and timing (`context-window`, `usage`…). */
  readonly name: string;
  /**
   * Decorates `inner` (the upstream built by the stages before this one) for `turn`.
   * @throws {ApiError} to reject the turn before anything is stored or sent.
   */
  wrap(inner: Upstream, turn: PreparedTurn): Upstream | Promise<Upstream>;
}
