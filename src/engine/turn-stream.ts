/**
 * The "open and stream" steps of a turn, after `response.created` was sent: opens the turn's
 * upstream, follows its stream, re-keys its output events to Deltagate's ids and emits them, and
 * decides the response's outcome. Owns how upstream events and failures map to client events:
 * - the upstream's lifecycle events are dropped (the engine emitted its own `response.created` /
 *   `response.in_progress` when it accepted the turn);
 * - a failure of `open()` (every retry and fallback spent before the first event) and a failure
 *   mid-stream both end the response with `response.failed` carrying the error, as OpenAI reports
 *   a failure after `response.created`; a non-streaming HTTP client gets the upstream's status
 *   for the former (`FailureStatus`);
 * - the upstream's terminal event or `error` ends the stream;
 * - an abort (cancel, abandonment, store:false owner gone) stops at once: the pending upstream
 *   read is not waited for, and the upstream request is aborted through the same signal.
 * A response that ends early keeps the output its client was sent (partial-output.ts) and the
 * usage so far (the upstream's, else Deltagate's count: `UpstreamStream.usage`).
 * Invariant: every output event carries Deltagate's item ids (rekey.ts); nothing is emitted after
 * the outcome is known (the terminal event is the commit step's, turn-emitter.ts).
 */
import { ApiError } from "../protocol/errors.ts";
import { LIFECYCLE_EVENT_TYPES, TERMINAL_EVENT_TYPES } from "../protocol/server-events.ts";
import type { ResponseOutcome } from "../store/conversation-store.ts";
import {
  type Upstream,
  UpstreamError,
  type UpstreamEvent,
  type UpstreamRequest,
  type UpstreamStream,
} from "../upstream/upstream.ts";
import { errorOf, FAILED_MID_STREAM, type FailureStatus, failure, terminalOutcome } from "./outcome.ts";
import { PartialOutput } from "./partial-output.ts";
import { OutputRekeyer } from "./rekey.ts";
import type { TurnEmitter } from "./turn-emitter.ts";

/** How a turn's stream ended. */
export interface StreamResult {
  outcome: ResponseOutcome;
  /** For a response that did not complete: how a non-streaming HTTP request is answered. */
  failure: FailureStatus | null;
}

/**
 * Logs an unexpected failure of the turn's stream (never sent to the client): the session logs it
 * with the session's and response's ids, redacted (src/session/failure-log.ts).
 */
export type FailureLog = (where: string, cause: unknown) => void;

/**
 * Opens `upstream` and streams it to `turn` until its outcome is known.
 * @param signal the turn's abort signal (client gone, `cancel`, abandonment); also passed to the
 *   upstream, so aborting it aborts the upstream request.
 * @returns the outcome to commit, or null when the turn was aborted because its store:false
 *   owner went away (nothing is kept).
 */
export async function streamTurn(
  upstream: Upstream,
  request: UpstreamRequest,
  turn: TurnEmitter,
  signal: AbortSignal,
  now: () => number,
  log: FailureLog,
): Promise<StreamResult | null> {
  const rekey = new OutputRekeyer();
  const output = new PartialOutput();
  let opened: UpstreamStream | null = null;
  let result: StreamResult | null = null;
  const handle = (event: UpstreamEvent) => {
    if (LIFECYCLE_EVENT_TYPES.has(event.type) || result) return;
    if (TERMINAL_EVENT_TYPES.has(event.type)) {
      const outcome = terminalOutcome(event, rekey, () => output.items(), now());
      result = { outcome, failure: outcome.status === "failed" ? FAILED_MID_STREAM : null };
    } else if (event.type === "error") {
      result = { outcome: failure(output.items(), now(), errorOf(event)), failure: FAILED_MID_STREAM };
    } else {
      const rekeyed = rekey.event(event);
      output.apply(rekeyed);
      const { type, sequence_number: _seq, ...fields } = rekeyed;
      turn.emit(type, fields);
    }
  };
  let events: AsyncIterator<UpstreamEvent> | null = null;
  const reads = new AbortableReads(signal);
  try {
    opened = await untilAborted(upstream.open(request, signal), signal, releaseLate);
    handle(opened.first);
    events = opened.rest[Symbol.asyncIterator]();
    while (!result && !signal.aborted) {
      const next = await reads.next(events);
      if (next.done) break;
      handle(next.value);
    }
  } catch (cause) {
    if (!signal.aborted) result = failed(cause, opened === null, output, now(), log);
  } finally {
    reads.close();
    // Stop reading an upstream that still streams (its request is aborted through `signal`).
    if (events && (result === null || signal.aborted)) void events.return?.().catch(() => {});
  }
  if (signal.aborted) {
    const reason: unknown = signal.reason;
    if (reason !== "cancelled" && reason !== "abandoned") return null; // store:false owner gone
    // OpenAI's cancelled response carries `error: null`: a cancellation is no error
    // (https://platform.openai.com/docs/api-reference/responses/cancel).
    result = {
      outcome: {
        status: "cancelled",
        output: output.items(),
        usage: null,
        error: null,
        incompleteDetails: null,
        completedAt: now(),
      },
      failure: FAILED_MID_STREAM,
    };
  }
  result ??= {
    outcome: failure(output.items(), now(), {
      code: "server_error",
      message: "The upstream stream ended before the response completed.",
    }),
    failure: FAILED_MID_STREAM,
  };
  return { ...result, outcome: await withUsage(result.outcome, opened, log) };
}

/** The result of a failure of the upstream (before its first event when `beforeFirst`). */
function failed(
  cause: unknown,
  beforeFirst: boolean,
  output: PartialOutput,
  at: number,
  log: FailureLog,
): StreamResult {
  if (cause instanceof UpstreamError || cause instanceof ApiError) {
    const code = cause.code ?? (cause.status >= 500 ? "server_error" : "invalid_request");
    return {
      outcome: failure(output.items(), at, { code, message: cause.message }),
      failure: beforeFirst ? { status: cause.status, type: cause.type } : FAILED_MID_STREAM,
    };
  }
  log("upstream stream failed", cause);
  return {
    outcome: failure(output.items(), at, { code: "server_error", message: "The upstream stream failed." }),
    failure: FAILED_MID_STREAM,
  };
}

/**
 * `outcome` with a usage: the upstream's when it reported one, else Deltagate's count of what was
 * sent and of the output so far (nothing, when the upstream never started).
 */
async function withUsage(
  outcome: ResponseOutcome,
  opened: UpstreamStream | null,
  log: FailureLog,
): Promise<ResponseOutcome> {
  if (outcome.usage !== null || !opened?.usage) return outcome;
  try {
    return { ...outcome, usage: await opened.usage(outcome.output) };
  } catch (cause) {
    log("usage count failed", cause);
    return outcome;
  }
}

/** An upstream stream opened after its turn was aborted: nobody reads it, so release it. */
function releaseLate(stream: UpstreamStream): void {
  void stream.rest[Symbol.asyncIterator]()
    .return?.()
    ?.catch(() => {});
}

/**
 * Reads of an upstream stream that end as soon as the turn's signal aborts: `next(events)` is
 * `events.next()`, or a rejection with `signal.reason` when the signal aborts first (the read is
 * then left to settle on its own). One abort listener serves every read of the turn (a listener
 * added and removed per event would cost more than the event's relay).
 */
class AbortableReads {
  private readonly signal: AbortSignal;
  private rejectPending: ((reason: unknown) => void) | null = null;
  private readonly onAbort = () => this.rejectPending?.(this.signal.reason);

  constructor(signal: AbortSignal) {
    this.signal = signal;
    signal.addEventListener("abort", this.onAbort, { once: true });
  }

  next<T>(events: AsyncIterator<T>): Promise<IteratorResult<T>> {
    if (this.signal.aborted) return Promise.reject(this.signal.reason);
    return new Promise<IteratorResult<T>>((resolve, reject) => {
      this.rejectPending = reject;
      events.next().then(resolve, reject);
    });
  }

  /** Removes the listener (the turn's reads are over). */
  close(): void {
    this.rejectPending = null;
    this.signal.removeEventListener("abort", this.onAbort);
  }
}

/**
 * `promise`, or a rejection with `signal.reason` as soon as `signal` aborts (the promise is then
 * left to settle on its own; `late` receives its value if it still resolves).
 */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal, late?: (value: T) => void): Promise<T> {
  if (signal.aborted) {
    promise.then(late, () => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      promise.then(late, () => {});
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (cause: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(cause);
      },
    );
  });
}
