/**
 * The turn engine: runs one `response.create` from validation to the stored terminal state,
 * independent of the transport (WebSocket lane or HTTP). Owns the order of a turn, one named step
 * each:
 *   1. `resolveParent`: `previous_response_id`, visible to the caller (the session's one rule:
 *      store:true within retention; store:false its own socket, or another socket of the tenant
 *      within the grace window; imported from another session of the tenant when needed);
 *   1b. `planChain` (transparent deltas, src/resend/): item references become the items they
 *      name (item-references.ts); a request without `previous_response_id`
 *      whose input begins with exactly a chain the session holds (same settings, visible to the
 *      caller by the same rule) continues that chain with the rest of its input as its own — as
 *      does one chained on an empty warm-up whose input, with the request's, begins so
 *      (warm-up.ts); every turn's chain hash is computed here (one pass over its own input), and
 *      reasoning items resent without their encrypted content get it back;
 *   2. `prepareContext`: the input items (a trailing `compaction_trigger` taken off: never stored),
 *      history(parent) from the render cache or SQLite (minus outputs whose call was deleted and
 *      items that never finished, history-repair.ts; from the chain's latest compaction output
 *      on, src/compaction/compaction-items.ts), tool pairing over both, the record;
 *   3. the turn's upstream from the stage pipeline (src/pipeline/pipeline.ts: route chain, usage,
 *      context window) — a stage may still reject the turn;
 *   4. `warmUp` (`generate: false`): a stored, chainable response with no upstream inference
 *      (pre-warmed upstream unless it repeats a chain the session holds);
 *   5. `stream`: the turn is accepted — store the response (in progress, with its input), emit
 *      `response.created` / `response.in_progress` at once (a background response: stored
 *      `queued`, `response.created` and `response.queued`, then started: docs/background.md),
 *      then open the upstream (retries and fallback stay invisible) and emit its re-keyed
 *      events (turn-stream.ts); a failure of the
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
import { type TurnFacts, TurnTimer } from "../pipeline/turn-timer.ts";
import { type CreateRequest, normalizeInput } from "../protocol/create-request.ts";
import { invalidRequest, previousResponseNotFound } from "../protocol/errors.ts";
import type { StoredItem } from "../protocol/items.ts";
import { checkSettingSizes } from "../protocol/size-limits.ts";
import { type ChainState, extendChain, resendKey } from "../resend/chain-hash.ts";
import { itemFingerprint, settingsKey } from "../resend/fingerprint.ts";
import { resolveReferences } from "../resend/item-references.ts";
import { findResend, prefixChains } from "../resend/match.ts";
import { restoreReasoning } from "../resend/reasoning-restore.ts";
import { givenItems, warmUpInput } from "../resend/warm-up.ts";
import type { ConversationStore, ResponseOutcome, ResponseRecord } from "../store/conversation-store.ts";
import type { Upstream, UpstreamRequest } from "../upstream/upstream.ts";
import { newResponseId } from "../util/ids.ts";
import { validateTurnContext } from "./context-rules.ts";
import { ConversationTurns, conversationOf } from "./conversation-turns.ts";
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
  /** False when the client turned `keepalive` events off (src/http/client-options.ts). */
  keepalive?: boolean;
  /** The API key the turn came with (src/tenancy/; `env` for a `DELTAGATE_API_KEYS` key), for the usage ledger. */
  keyId?: string;
  /**
   * What the tenant's limits reserved for the turn at its admission (src/session/admission.ts),
   * settled by `finished` to the turn's real usage; opaque here.
   */
  reservation?: TurnReservation;
}

/** Tokens the tenant gate reserved for a call (an object: the gate settles each one once). */
export interface TurnReservation {
  readonly tokens: number;
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
  /**
   * Called once per accepted turn that will reach its upstream, in the same synchronous step that
   * stores it (its first commit, before the upstream is opened): what it records (the usage ledger's
   * open row, src/tenancy/usage-outbox.ts) is durable before the upstream is called, so a turn a
   * restart ends is still booked.
   */
  started?(scope: TurnScope, record: ResponseRecord): void;
  /**
   * Called once per accepted turn when it ended (completed, failed, cancelled, incomplete; null
   * when its store:false owner went away), synchronously after its terminal state was written, so
   * what it records shares that commit (the usage ledger's outbox, src/tenancy/usage-outbox.ts).
   * @returns facts of the turn as the ledger booked them (its tokens and cost), which the turn's
   *   timer reports (src/pipeline/turn-timing.ts): the log line says what the ledger says.
   */
  finished?(scope: TurnScope, record: ResponseRecord, outcome: ResponseOutcome | null): TurnFacts | undefined;
  /** Transparent deltas on (src/resend/): a full resend continues the chain it matches. Default true. */
  resends?: boolean;
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
  /** The request's settings key (src/resend/fingerprint.ts): with the chain, the resend key. */
  settingsKey: string;
}

/** What `planChain` decided: the parent, the turn's own input, its chain hash through that input. */
interface ChainPlan {
  parent: ResponseRecord | null;
  /** The turn's own input items (a matched resend: its tail), ids assigned. */
  input: StoredItem[];
  /** The parent the client named, or null. */
  named: ResponseRecord | null;
  /**
   * Leading items of the request's input that matched the parent's chain (0: none; a resend
   * chained on an empty warm-up: those after the warm-up's own).
   */
  matched: number;
  /**
   * A warm-up (`generate: false`) without a parent whose whole input is a chain the session holds
   * (with its settings): its upstream pre-warm would only displace that chain upstream.
   */
  repeats: boolean;
  chain: ChainState | null;
  settingsKey: string;
  /** The input ended with a `compaction_trigger` (taken off, src/compaction/). */
  trigger: boolean;
}

/** Runs turns against one session's store. */
export class TurnEngine {
  private readonly deps: TurnEngineDeps;
  /** Turns of conversations: serialized per conversation, their items as context. */
  private readonly conversationTurns: ConversationTurns;

  constructor(deps: TurnEngineDeps) {
    this.deps = deps;
    this.conversationTurns = new ConversationTurns(deps.store.conversations);
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
  run(
    request: CreateRequest,
    scope: TurnScope,
    sink: EventSink,
    signal: AbortSignal,
    timer = new TurnTimer(),
  ): Promise<TurnResult> {
    let conversationId: string | null;
    try {
      conversationId = conversationOf(request);
    } catch (error) {
      return Promise.reject(error);
    }
    if (conversationId === null) return this.runTurn(request, scope, sink, signal, timer, null);
    const id = conversationId;
    // After the turns of the conversation before it, with its items as context (conversation-turns.ts).
    return this.conversationTurns.run(id, request, (expanded) =>
      this.runTurn(expanded, scope, sink, signal, timer, id),
    );
  }

  /** The items of conversation `id` (404 when unknown): the context `input_tokens` counts. */
  conversationItems(id: string): StoredItem[] {
    return this.conversationTurns.items(id);
  }

  /** `run` of one turn; `conversationId`: the conversation it continues (its input already expanded). */
  private async runTurn(
    request: CreateRequest,
    scope: TurnScope,
    sink: EventSink,
    signal: AbortSignal,
    timer: TurnTimer,
    conversationId: string | null,
  ): Promise<TurnResult> {
    // A sampled turn's `deltagate.context` span: its parent, chain plan and context (to `render`).
    const contextSpan = timer.trace?.start("context");
    let named: ResponseRecord | null;
    let plan: ChainPlan;
    try {
      rejectUnsupported(request);
      checkSettingSizes(forwardedSettings(request)); // src/protocol/size-limits.ts
      named = await this.resolveParent(request.previous_response_id ?? null, scope);
      plan = this.planChain(request, named, scope);
    } catch (error) {
      contextSpan?.end();
      throw error;
    }
    timer.note({ chained: named !== null, resend_matched_items: plan.matched });
    timer.lap("state");
    // A matched resend continues its chain as if it had named it (safety checks only the tail).
    const effective =
      plan.matched > 0 ? { ...request, previous_response_id: plan.parent?.id ?? null } : request;
    let failedId: string | null = null;
    try {
      let turn: Turn;
      try {
        turn = this.prepareContext(effective, plan, scope, timer, conversationId);
      } finally {
        contextSpan?.end();
      }
      failedId = turn.record.id;
      timer.lap("render");
      const upstream = await this.deps.upstreamFor(turn.prepared);
      timer.lap("stages");
      if (request.generate === false) {
        const warm = this.warmUp(turn, upstream, sink, scope, !plan.repeats);
        timer.trace?.response(warm.responseId, "completed", ZERO_USAGE); // no commit span: nothing generated
        return warm;
      }
      const result = await this.stream(turn, upstream, sink, signal, timer, scope);
      // `response.failed`, not a cancellation (also reported as a failure to a plain HTTP client).
      const failed = result.failure !== null && this.deps.store.get(result.responseId)?.status === "failed";
      // Only a parent the client named is evicted (a matched resend never named one).
      if (failed && !signal.aborted) evictAfterFailure(this.deps.store, named, request, failedId);
      return result;
    } catch (error) {
      // A failed continuation evicts its store:false parent (failed-continuation.ts).
      if (!signal.aborted) evictAfterFailure(this.deps.store, named, request, failedId);
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
   * Step 1b (src/resend/): the turn's parent and own input. A request that names its parent keeps
   * it — unless that parent is an empty warm-up (no parent, no output, the same settings:
   * src/resend/warm-up.ts, Codex on every new socket), whose input followed by the request's is
   * then matched like an unchained resend; one that names none continues the chain its input
   * begins with, if the session holds one the caller may continue with the same settings (its
   * own input is then the rest). A warm-up (`generate: false`) without a parent whose whole input
   * is such a chain is noted as a repeat: its upstream pre-warm is left out. Computes the turn's
   * chain hash through its input (a fingerprint per own input item; where a match is tried, the
   * rolling hash of every prefix, which the match needs anyway), and restores reasoning items
   * resent without their encrypted content. Item references are resolved first.
   * @throws {ApiError} 400 `item_too_large` for an oversized item; 404 for an item reference
   *   that names no item the caller may see.
   */
  private planChain(request: CreateRequest, named: ResponseRecord | null, scope: TurnScope): ChainPlan {
    // The session's one visibility rule, through the one call the engine has for it.
    const visible = (record: ResponseRecord | null) =>
      record !== null && this.deps.mayContinue(record, scope);
    // A trailing `compaction_trigger` is taken off: never stored nor echoed (src/compaction/);
    // item references become the items they name, before anything reads the input.
    const { items: own, trigger } = splitTrigger(inputItems(request));
    const all = this.resolveReferences(own, scope);
    const key = settingsKey(request, storedSettings(request));
    const resends = this.deps.resends !== false;
    const lookup = { store: this.deps.store, history: (id: string) => this.deps.history(id), visible };
    // The items as the client sent them (ids only where it gave one; a reference, resolved).
    const given = () =>
      normalizeInput(request.input)
        .slice(0, all.length)
        .map((item, index) => (all[index] !== own[index] ? all[index]! : item));
    const fingerprints = all.map(itemFingerprint);
    let parent = named;
    let matched = 0;
    let repeats = false;
    let chain: ChainState | null = null;
    if (named) {
      if (named.chain) {
        const chains = prefixChains(fingerprints, named.chain.hash);
        chain = { hash: chains[all.length]!, items: named.chain.items + all.length };
      }
      const warmUp = resends && all.length > 0 ? warmUpInput(lookup, named, key) : null;
      if (warmUp) {
        // history(warm-up) is its input: with the request's, the whole context, matched as a
        // resend that covers more than the warm-up and leaves at least one new item.
        const items = warmUp.length + all.length;
        const chains = prefixChains([...warmUp.map(itemFingerprint), ...fingerprints]);
        const sent = [...givenItems(warmUp), ...given()];
        const match = findResend(lookup, key, sent, chains, warmUp.length + 1, items - 1);
        if (match) {
          parent = match.parent;
          matched = match.matched - warmUp.length;
        }
      }
    } else {
      const chains = prefixChains(fingerprints);
      chain = { hash: chains[all.length]!, items: all.length };
      // A warm-up may match its whole input (a repeat); a turn must leave at least one new item.
      const longest = request.generate === false ? all.length : all.length - 1;
      const match = resends && longest > 0 ? findResend(lookup, key, given(), chains, 1, longest) : null;
      if (match?.matched === all.length) repeats = true;
      else if (match) {
        parent = match.parent;
        matched = match.matched;
      }
    }
    const input = restoreReasoning(matched > 0 ? all.slice(matched) : all, this.deps.store, (id) =>
      visible(this.deps.store.get(id)),
    );
    return { parent, named, input, matched, repeats, chain, settingsKey: key, trigger };
  }

  /**
   * `items` with each `item_reference` replaced by the item it names, from a response visible to
   * `scope` (src/resend/item-references.ts).
   * @throws {ApiError} 404 `Item with id '…' not found.` for a reference that names none.
   */
  resolveReferences(items: StoredItem[], scope: TurnScope): StoredItem[] {
    return resolveReferences(items, this.deps.store, (id) => {
      const record = this.deps.store.get(id);
      return record !== null && this.deps.mayContinue(record, scope);
    });
  }

  /**
   * Step 2: the full context (history + input) validated for tool pairing, and the response
   * record.
   * @throws {ApiError} 400 for a pairing violation.
   */
  private prepareContext(
    request: CreateRequest,
    plan: ChainPlan,
    scope: TurnScope,
    timer: TurnTimer,
    conversationId: string | null,
  ): Turn {
    const { parent, input, trigger } = plan;
    // Without what interrupted or deleted turns left (history-repair.ts), and from the chain's
    // latest compaction output on (it replaces what came before it: compaction-items.ts).
    const history = fromWindowStart(repairHistory(this.deps.history(parent?.id ?? null), input, parent));
    const storeFlag = request.store ?? true;
    const background = request.background === true;
    const record: ResponseRecord = {
      id: newResponseId(this.deps.ownerId),
      parentId: parent?.id ?? null,
      connId: storeFlag ? null : scope.connId,
      store: storeFlag,
      // A background response is announced queued, then starts (`stream`).
      status: background ? "queued" : "in_progress",
      model: request.model,
      settings: storedSettings(request),
      usage: null,
      error: null,
      incompleteDetails: null,
      createdAt: this.deps.now(),
      completedAt: null,
      implicitParent: plan.matched > 0,
      // A resend chained on a warm-up continues the matched chain; it shows the warm-up's id.
      ...(plan.matched > 0 && plan.named ? { namedParentId: plan.named.id } : {}),
      chain: plan.chain,
      ...(background ? { background: true } : {}),
      ...(conversationId !== null ? { conversationId } : {}),
    };
    const context = turnContext(record.id, history, input, reportedHistoryTokens(parent));
    validateTurnContext(context.all.items, {
      input,
      continues: parent !== null,
      generate: request.generate !== false,
      prompted: Boolean(request.prompt),
      maxOutputTokens: request.max_output_tokens,
    });
    return {
      record,
      input,
      settingsKey: plan.settingsKey,
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

  /**
   * Step 4 (`generate: false`): a chainable node with the request's input and no model output.
   * @param prewarm whether the upstream pre-warms it: not for a repeat of a chain the session
   *   holds (`ChainPlan.repeats`), whose pre-warm would take the place of the response an
   *   upstream WebSocket holds (OpenAI keeps one per connection) while adding nothing the
   *   upstream has not seen: the next turn, a resend chained on it, continues that chain.
   */
  private warmUp(
    turn: Turn,
    upstream: Upstream,
    sink: EventSink,
    scope: TurnScope,
    prewarm: boolean,
  ): TurnResult {
    const { record } = turn;
    if (record.store) this.createRecord(turn);
    if (prewarm) upstream.prewarm?.(turn.upstreamRequest);
    const live = this.deps.live.begin(record.id, sink, false);
    const emitter = new TurnEmitter(live, this.deps.store, record);
    emitter.emit("response.created", { response: responseObject(record, []) });
    emitter.emit("response.in_progress", { response: responseObject(record, []) });
    if (!record.store) this.createRecord(turn); // after its events: see `stream`
    const outcome = withChain(turn, {
      status: "completed",
      output: [],
      usage: ZERO_USAGE,
      error: null,
      incompleteDetails: null,
      completedAt: this.deps.now(),
    });
    emitter.complete(outcome);
    this.deps.finished?.(scope, record, outcome);
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
    scope: TurnScope,
  ): Promise<TurnResult> {
    const { record } = turn;
    // store:true: the response is stored before it is announced, and its log exists from the
    // start (written with the record's insert, in the same commit). store:false: announced
    // first, stored right after (same synchronous step, so no other event sees it missing):
    // a Durable Object's output gate holds every message sent after a write until the write is
    // durable, and connection-scoped state need not be (turn-emitter.ts).
    if (record.store) this.createRecord(turn, scope);
    // A background response outlives every client: no grace period cancels it for want of one.
    const live = this.deps.live.begin(record.id, sink, record.store && !record.background);
    const keepaliveMs = scope.keepalive !== false ? this.deps.keepaliveMs : 0;
    const emitter = new TurnEmitter(live, this.deps.store, record, keepaliveMs);
    try {
      emitter.emit("response.created", { response: responseObject(record, []) });
      if (record.background) {
        // Announced queued (OpenAI's `response.queued`), then started at once: no queue holds it.
        emitter.emit("response.queued", { response: responseObject(record, []) });
        this.deps.store.start(record.id);
      }
      const started: ResponseRecord = { ...record, status: "in_progress" };
      emitter.emit("response.in_progress", { response: responseObject(started, []) });
      if (record.store) emitter.flush();
      else this.createRecord(turn, scope);
      const result = await streamTurn(
        upstream,
        turn.upstreamRequest,
        emitter,
        AbortSignal.any([signal, live.signal]),
        this.deps.now,
        (where, cause) => this.deps.logFailure(where, record.id, cause),
      );
      const outcome = result ? withChain(turn, result.outcome) : null;
      if (outcome) this.commit(emitter, outcome, record.id, timer);
      const booked = this.deps.finished?.(scope, record, outcome);
      if (booked) timer.note(booked);
      timer.end();
      return { responseId: record.id, failure: result ? result.failure : null };
    } finally {
      emitter.close();
      this.deps.live.end(record.id);
    }
  }

  /** Step 6: commits the outcome and sends the terminal event (`commit`; a sampled turn's span). */
  private commit(emitter: TurnEmitter, outcome: ResponseOutcome, id: string, timer: TurnTimer): void {
    const trace = timer.trace;
    if (trace === null) {
      timer.measure("commit", () => emitter.complete(outcome));
      return;
    }
    const span = trace.start("commit");
    try {
      timer.measure("commit", () => emitter.complete(outcome));
    } finally {
      span.end();
    }
    trace.response(id, outcome.status, outcome.usage);
  }

  /**
   * Inserts the in-progress response with its input rows (and the token counts made so far); with
   * `scope`, a turn that will reach its upstream, whose start `started` records in the same step.
   */
  private createRecord(turn: Turn, scope?: TurnScope): void {
    this.deps.store.create(
      turn.record,
      turn.input,
      turn.prepared.context.input.map((c) => c.tokens),
    );
    if (scope) this.deps.started?.(scope, turn.record);
  }
}

/**
 * `outcome` with the response's chain hash through its output and, when it completed, its resend
 * key (src/resend/chain-hash.ts): a later full resend of this conversation finds it by that key.
 */
function withChain(turn: Turn, outcome: ResponseOutcome): ResponseOutcome {
  const start = turn.record.chain;
  if (!start) return outcome;
  const hash = extendChain(start.hash, outcome.output);
  const key = outcome.status === "completed" ? resendKey(turn.settingsKey, hash) : null;
  return { ...outcome, chain: { hash, items: start.items + outcome.output.length, resendKey: key } };
}

/**
 * Rejects request features Deltagate does not serve. (`background` is the transports': HTTP serves
 * it, src/session/http-transport.ts; WebSocket mode refuses it, src/session/ws-transport.ts.)
 */
function rejectUnsupported(request: CreateRequest): void {
  if (request.background_options) {
    throw invalidRequest(
      "background_options (a completion window, a continuation id) is not supported by Deltagate: a background response starts at once.",
      "background_options",
      "unsupported_parameter",
    );
  }
  if (request.access_programs) {
    // The Response object reports the program that applied (`access_programs`); Deltagate cannot.
    throw invalidRequest(
      "access_programs is not supported by Deltagate.",
      "access_programs",
      "unsupported_parameter",
    );
  }
}
