/**
 * The turn engine: runs one `response.create` from validation to the stored terminal state,
 * independent of the transport (WebSocket lane or HTTP). Owns the order of a turn, one named step
 * each:
 *   1. `resolveParent`: `previous_response_id`, visible to the caller (the session's one rule:
 *      store:true within retention; store:false its own socket, or another socket of the tenant
 *      within the grace window; imported from another session of the tenant when needed);
 *   2. `prepareContext`: the input items (a trailing `compaction_trigger` taken off: never stored),
 *      history(parent) from the render cache or SQLite (minus outputs whose call was deleted and
 *      items that never finished, history-repair.ts; from the chain's latest compaction output
 *      on, src/compaction/compaction-items.ts), tool pairing over both, the record;
 *   3. the turn's upstream from the stage pipeline (src/pipeline/pipeline.ts: route chain, usage,
 *      context window) — a stage may still reject the turn;
 *   4. `warmUp` (`generate: false`): a stored, chainable response with no upstream inference;
 *   5. `stream`: the turn is accepted — store the response (in progress, with its input), emit
 *      `response.created` / `response.in_progress` at once, then open the upstream (retries and
 *      fallback stay invisible) and emit its re-keyed events (turn-stream.ts); a failure of the
 *      upstream from here on, before its first event or after, ends in `response.failed`;
 *   6. commit: output + terminal status + the rest of the event log in one transaction, then the
 *      terminal event (turn-emitter.ts), so a client never sees a completion that is not stored.
 *      store:false responses are connection-scoped state, off the durable-commit path: their
 *      events go out first and their rows are written right after (losing them in a crash equals
 *      losing the socket; the client's next turn sends the full context).
 * Invariant: steps 1–3 store nothing; a rejection there is a request-level error and leaves no
 * trace — except that a failed continuation (a rejection after step 1, or `response.failed`)
 * evicts the store:false parent it named, as OpenAI does (failed-continuation.ts).
 * Source: https://platform.openai.com/docs/api-reference/responses/create,
 *   https://developers.openai.com/api/docs/guides/websocket-mode
 */
import { fromWindowStart, splitTrigger } from "../compaction/compaction-items.ts";
import type { CountedContext } from "../context/counted-context.ts";
import { turnContext } from "../context/counted-context.ts";
import { reportedHistoryTokens } from "../context/usage.ts";
import type { PreparedTurn } from "../pipeline/stage.ts";
import { TurnTimer } from "../pipeline/turn-timer.ts";
import type { CreateRequest } from "../protocol/create-request.ts";
import { invalidRequest, previousResponseNotFound } from "../protocol/errors.ts";
import type { StoredItem } from "../protocol/items.ts";
import { checkSettingSizes } from "../protocol/size-limits.ts";
import type { ConversationStore, ResponseRecord } from "../store/conversation-store.ts";
import type { Upstream, UpstreamRequest } from "../upstream/upstream.ts";
import { newResponseId } from "../util/ids.ts";
import { validateTurnContext } from "./context-rules.ts";
import type { EventSink } from "./event-sink.ts";
import { evictAfterFailure } from "./failed-continuation.ts";
import { repairHistory } from "./history-repair.ts";
import type { LiveRegistry } from "./live-responses.ts";
import type { FailureStatus } from "./outcome.ts";
import { responseObject, ZERO_USAGE } from "./response-object.ts";
import { TurnEmitter } from "./turn-emitter.ts";
import { forwardedSettings, inputItems, storedSettings } from "./turn-input.ts";
import { streamTurn } from "./turn-stream.ts";

/**
 * Who runs the turn: a WebSocket connection or one HTTP request (each has its own store:false
 * scope, src/session/scope.ts), on behalf of `tenant`.
 */
export interface TurnScope {
  connId: string;
  tenant: string;
  /** False when the client turned `keepalive` events off (src/session/client-options.ts). */
  keepalive?: boolean;
}

/** Collaborators of the engine. */
export interface TurnEngineDeps {
  store: ConversationStore;
  /** history(parent) with sizes (src/context/context-window.ts); empty for null. */
  history(parentId: string | null): CountedContext;
  /** The turn's upstream, wrapped by every stage (src/pipeline/pipeline.ts). */
  upstreamFor(turn: PreparedTurn): Promise<Upstream>;
  /** Hex id of the owning Durable Object (embedded in response ids; the default `prompt_cache_key`). */
  ownerId: string;
  /** Clock in ms. */
  now(): number;
  /** Silence in ms after which a response in flight sends a `keepalive` event (0 = never). */
  keepaliveMs: number;
  /** Live responses of the session: event logs, subscribers, cancellation. */
  live: LiveRegistry;
  /**
   * Copies a response owned by another session Durable Object of the same tenant into this one
   * (so a chain can continue from any session): store:true, or store:false still continuable by
   * `scope` (it stays store:false here, owned by `scope`). Resolves false when it is not found.
   */
  importRemote(responseId: string, scope: TurnScope): Promise<boolean>;
  /**
   * Whether `scope` may continue `parent` now: the session's one visibility rule
   * (src/session/visibility.ts: retention of store:true, scopes of store:false).
   */
  mayContinue(parent: ResponseRecord, scope: TurnScope): boolean;
  /**
   * Logs an unexpected failure of a turn's stream with the response's id (the session adds its
   * own and redacts the line: src/session/failure-log.ts).
   */
  logFailure(where: string, responseId: string, cause: unknown): void;
}

/** What a turn ended with. */
export interface TurnResult {
  /** The response's id. */
  responseId: string;
  /**
   * Null when the response completed (or is incomplete); else how a non-streaming HTTP request is
   * answered: the upstream's status for a failure before its first event, else 500.
   */
  failure: FailureStatus | null;
}

/** A turn after `prepareContext`: its record, input and what its stages and upstream get. */
interface Turn {
  record: ResponseRecord;
  /** The request's own input items, ids assigned. */
  input: StoredItem[];
  prepared: PreparedTurn;
  upstreamRequest: UpstreamRequest;
}

/** Runs turns against one session's store. */
export class TurnEngine {
  private readonly deps: TurnEngineDeps;

  constructor(deps: TurnEngineDeps) {
    this.deps = deps;
  }

  /**
   * Runs one turn, emitting its events to `sink`.
   * @param signal aborting it (a store:false client went away) cancels the upstream request and
   *   stops without storing further state.
   * @param timer the turn's stopwatch (src/pipeline/turn-timer.ts), started by the transport.
   * @returns the response's id and how it ended.
   * @throws {ApiError} when the request is rejected before `response.created` (validation,
   *   size limits, unknown previous response, pairing, a stage). Nothing is stored in that case.
   */
  async run(
    request: CreateRequest,
    scope: TurnScope,
    sink: EventSink,
    signal: AbortSignal,
    timer = new TurnTimer(),
  ): Promise<TurnResult> {
    rejectUnsupported(request);
    checkSettingSizes(forwardedSettings(request)); // src/protocol/size-limits.ts
    const parent = await this.resolveParent(request.previous_response_id ?? null, scope);
    timer.lap("state");
    let failedId: string | null = null;
    try {
      const turn = this.prepareContext(request, parent, scope, timer);
      failedId = turn.record.id;
      timer.lap("render");
      const upstream = await this.deps.upstreamFor(turn.prepared);
      timer.lap("stages");
      if (request.generate === false) return this.warmUp(turn, upstream, sink);
      const result = await this.stream(turn, upstream, sink, signal, timer, scope.keepalive !== false);
      // `response.failed`, not a cancellation (also reported as a failure to a plain HTTP client).
      const failed = result.failure !== null && this.deps.store.get(result.responseId)?.status === "failed";
      if (failed && !signal.aborted) evictAfterFailure(this.deps.store, parent, request, failedId);
      return result;
    } catch (error) {
      // A failed continuation evicts its store:false parent (failed-continuation.ts).
      if (!signal.aborted) evictAfterFailure(this.deps.store, parent, request, failedId);
      throw error;
    }
  }

  /**
   * Step 1: the response `previous_response_id` names, visible to `scope` and finished.
   * @throws {ApiError} `previous_response_not_found` / `previous_response_in_progress`.
   */
  private async resolveParent(parentId: string | null, scope: TurnScope): Promise<ResponseRecord | null> {
    const { store } = this.deps;
    if (!parentId) return null;
    let parent = store.get(parentId);
    if (!parent && (await this.deps.importRemote(parentId, scope))) parent = store.get(parentId);
    if (!parent || !this.deps.mayContinue(parent, scope)) {
      throw previousResponseNotFound(parentId);
    }
    if (parent.status === "in_progress" || parent.status === "queued") {
      throw invalidRequest(
        `Previous response with id '${parent.id}' is still in progress.`,
        "previous_response_id",
        "previous_response_in_progress",
      );
    }
    return parent;
  }

  /**
   * The history a request with `previous_response_id` continues, as a turn would send it (visible
   * to `scope`, repaired, from its latest compaction output on): for the endpoints that read a
   * context without running a turn (`/v1/responses/compact`, `/v1/responses/input_tokens`).
   * @throws {ApiError} as step 1.
   */
  async historyFor(
    previousResponseId: string | null,
    input: readonly StoredItem[],
    scope: TurnScope,
  ): Promise<readonly StoredItem[]> {
    const parent = await this.resolveParent(previousResponseId, scope);
    return fromWindowStart(repairHistory(this.deps.history(parent?.id ?? null), input, parent)).items;
  }

  /**
   * Step 2: the input items, the full context (history + input) validated for tool pairing,
   * and the response record.
   * @throws {ApiError} 400 for an oversized item or a pairing violation.
   */
  private prepareContext(
    request: CreateRequest,
    parent: ResponseRecord | null,
    scope: TurnScope,
    timer: TurnTimer,
  ): Turn {
    // A trailing `compaction_trigger` is taken off: never stored nor echoed (src/compaction/).
    const { items: input, trigger } = splitTrigger(inputItems(request));
    // Without what interrupted or deleted turns left (history-repair.ts), and from the chain's
    // latest compaction output on (it replaces what came before it: compaction-items.ts).
    const history = fromWindowStart(repairHistory(this.deps.history(parent?.id ?? null), input, parent));
    const storeFlag = request.store ?? true;
    const record: ResponseRecord = {
      id: newResponseId(this.deps.ownerId),
      parentId: parent?.id ?? null,
      connId: storeFlag ? null : scope.connId,
      store: storeFlag,
      status: "in_progress",
      model: request.model,
      settings: storedSettings(request),
      usage: null,
      error: null,
      incompleteDetails: null,
      createdAt: this.deps.now(),
      completedAt: null,
    };
    const context = turnContext(record.id, history, input, reportedHistoryTokens(parent));
    validateTurnContext(context.all.items, {
      input,
      continues: parent !== null,
      generate: request.generate !== false,
      maxOutputTokens: request.max_output_tokens,
    });
    return {
      record,
      input,
      prepared: {
        responseId: record.id,
        request,
        context,
        timer,
        ...(trigger ? { compactionTrigger: true } : {}),
      },
      upstreamRequest: {
        ...(trigger ? { compactionTrigger: true } : {}),
        model: request.model,
        input: context.all.items,
        newInput: input,
        previousResponseId: record.parentId,
        responseId: record.id,
        settings: forwardedSettings(request),
        sessionKey: this.deps.ownerId,
      },
    };
  }

  /** Step 4 (`generate: false`): a chainable node with the request's input and no model output. */
  private warmUp(turn: Turn, upstream: Upstream, sink: EventSink): TurnResult {
    const { record } = turn;
    if (record.store) this.createRecord(turn);
    upstream.prewarm?.(turn.upstreamRequest);
    const live = this.deps.live.begin(record.id, sink, false);
    const emitter = new TurnEmitter(live, this.deps.store, record);
    emitter.emit("response.created", { response: responseObject(record, []) });
    emitter.emit("response.in_progress", { response: responseObject(record, []) });
    if (!record.store) this.createRecord(turn); // after its events: see `stream`
    emitter.complete({
      status: "completed",
      output: [],
      usage: ZERO_USAGE,
      error: null,
      incompleteDetails: null,
      completedAt: this.deps.now(),
    });
    this.deps.live.end(record.id);
    return { responseId: record.id, failure: null };
  }

  /**
   * Steps 5–6: the turn is accepted: stores the response, announces it, opens the upstream,
   * streams its events, commits the outcome.
   */
  private async stream(
    turn: Turn,
    upstream: Upstream,
    sink: EventSink,
    signal: AbortSignal,
    timer: TurnTimer,
    keepalive: boolean,
  ): Promise<TurnResult> {
    const { record } = turn;
    // store:true: the response is stored before it is announced, and its log exists from the
    // start (written with the record's insert, in the same commit). store:false: announced
    // first, stored right after (same synchronous step, so no other event sees it missing):
    // a Durable Object's output gate holds every message sent after a write until the write is
    // durable, and connection-scoped state need not be (turn-emitter.ts).
    if (record.store) this.createRecord(turn);
    const live = this.deps.live.begin(record.id, sink, record.store);
    const keepaliveMs = keepalive ? this.deps.keepaliveMs : 0;
    const emitter = new TurnEmitter(live, this.deps.store, record, keepaliveMs);
    try {
      emitter.emit("response.created", { response: responseObject(record, []) });
      emitter.emit("response.in_progress", { response: responseObject(record, []) });
      if (record.store) emitter.flush();
      else this.createRecord(turn);
      const result = await streamTurn(
        upstream,
        turn.upstreamRequest,
        emitter,
        AbortSignal.any([signal, live.signal]),
        this.deps.now,
        (where, cause) => this.deps.logFailure(where, record.id, cause),
      );
      if (result) timer.measure("commit", () => emitter.complete(result.outcome));
      timer.end();
      return { responseId: record.id, failure: result ? result.failure : null };
    } finally {
      emitter.close();
      this.deps.live.end(record.id);
    }
  }

  /** Inserts the in-progress response with its input rows (and the token counts made so far). */
  private createRecord(turn: Turn): void {
    this.deps.store.create(
      turn.record,
      turn.input,
      turn.prepared.context.input.map((c) => c.tokens),
    );
  }
}

/** Rejects request features Deltagate does not serve. */
function rejectUnsupported(request: CreateRequest): void {
  if (request.background) {
    throw invalidRequest(
      "background mode is not supported over this transport.",
      "background",
      "unsupported_parameter",
    );
  }
  if (request.conversation !== undefined && request.conversation !== null) {
    throw invalidRequest(
      "The Conversations API is not supported by Deltagate; use previous_response_id.",
      "conversation",
      "unsupported_parameter",
    );
  }
}
