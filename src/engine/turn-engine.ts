/**
 * The turn engine: runs one `response.create` from validation to the stored terminal state,
 * independent of the transport (WebSocket lane or HTTP). Owns the order of a turn:
 *   1. resolve `previous_response_id` (connection-scoped for store:false), rebuild the context
 *      from storage, validate tool pairing — all before any upstream call;
 *   2. open the upstream; a failure before its first event is a request-level `ApiError`;
 *   3. store the response (in progress, with its input) and emit `response.created`/`in_progress`;
 *   4. re-key and emit upstream events with contiguous `sequence_number`s from 0;
 *   5. commit output + terminal status, then emit the terminal event (the output gate holds the
 *      send until the write is durable, so a client never sees a completion that is not stored).
 * Source: brief §2.1, §3.4, §4.1–4.3.
 */
import { ContextWindow } from "../context/context-window.ts";
import {
  type CreateRequest,
  FORWARDED_SETTINGS,
  type Json,
  normalizeInput,
} from "../protocol/create-request.ts";
import { ApiError, invalidRequest, previousResponseNotFound } from "../protocol/errors.ts";
import type { Item, StoredItem } from "../protocol/items.ts";
import type { LiveRegistry } from "../session/live-responses.ts";
import type { ConversationStore, ResponseOutcome, ResponseRecord } from "../store/conversation-store.ts";
import {
  type Upstream,
  UpstreamError,
  type UpstreamEvent,
  type UpstreamStream,
} from "../upstream/upstream.ts";
import { newItemId, newResponseId } from "../util/ids.ts";
import { validateTurnContext } from "./context-rules.ts";
import type { EventSink } from "./event-sink.ts";
import { repairHistory } from "./history-repair.ts";
import { OutputRekeyer } from "./rekey.ts";
import { responseObject, ZERO_USAGE } from "./response-object.ts";
import { TurnEmitter } from "./turn-emitter.ts";

/** Largest serialized item Deltagate stores, in bytes (SQLite rows are capped at 2 MB in production). */
export const MAX_ITEM_BYTES = 1_900_000;

/**
 * Who runs the turn: a WebSocket connection or one HTTP request (each has its own `connId`, the
 * scope of its store:false responses), on behalf of `tenant`.
 */
export interface TurnScope {
  connId: string;
  tenant: string;
}

/** Collaborators of the engine. */
export interface TurnEngineDeps {
  store: ConversationStore;
  /** The upstream adapter for a model. */
  upstreamFor(model: string): Upstream;
  /** Hex id of the owning Durable Object (embedded in response ids; the default `prompt_cache_key`). */
  ownerId: string;
  /** Clock in ms. */
  now(): number;
  /** Live responses of the session: event logs, subscribers, cancellation. */
  live: LiveRegistry;
  /**
   * Copies a store:true response owned by another session Durable Object of the same tenant into
   * this one (so a chain can continue from any session). Resolves false when it is not found.
   */
  importRemote(responseId: string, tenant: string): Promise<boolean>;
}

const LIFECYCLE = new Set(["response.created", "response.in_progress", "response.queued"]);
const TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed"]);

/** Runs turns against one session's store. */
export class TurnEngine {
  private readonly deps: TurnEngineDeps;
  /** Render cache, token counts, `truncation` and usage fallback (src/context). */
  private readonly context: ContextWindow;

  constructor(deps: TurnEngineDeps) {
    this.deps = deps;
    this.context = new ContextWindow(deps.store);
  }

  /**
   * Runs one turn, emitting its events to `sink`.
   * @param signal aborting it (a store:false client went away) cancels the upstream request and
   *   stops without storing further state.
   * @returns the final response id.
   * @throws {ApiError} when the request is rejected before `response.created` (validation,
   *   unknown previous response, pairing, upstream failure before its first event). Nothing is
   *   stored in that case.
   */
  async run(request: CreateRequest, scope: TurnScope, sink: EventSink, signal: AbortSignal): Promise<string> {
    const { store, now } = this.deps;
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
    const parentId = request.previous_response_id ?? null;
    let parent = parentId ? store.get(parentId) : null;
    if (parentId && !parent && (await this.deps.importRemote(parentId, scope.tenant)))
      parent = store.get(parentId);
    if (parentId && (!parent || (parent.connId !== null && parent.connId !== scope.connId))) {
      throw previousResponseNotFound(parentId);
    }
    if (parent && (parent.status === "in_progress" || parent.status === "queued")) {
      throw invalidRequest(
        `Previous response with id '${parent.id}' is still in progress.`,
        "previous_response_id",
        "previous_response_in_progress",
      );
    }
    const input = assignIds(normalizeInput(request.input));
    // Render cache (src/context), else SQLite; then without what interrupted or deleted turns left.
    const history = repairHistory(this.context.history(parent?.id ?? null), input, parent);
    const context: StoredItem[] = [...history.items, ...input];
    validateTurnContext(context, {
      input,
      continues: parentId !== null,
      generate: request.generate !== false,
      maxOutputTokens: request.max_output_tokens,
    });

    const storeFlag = request.store ?? true;
    const record: ResponseRecord = {
      id: newResponseId(this.deps.ownerId),
      parentId,
      connId: storeFlag ? null : scope.connId,
      store: storeFlag,
      status: "in_progress",
      model: request.model,
      settings: pickSettings(request),
      usage: null,
      error: null,
      incompleteDetails: null,
      createdAt: now(),
      completedAt: null,
    };
    // Context window (src/context/context-window.ts): `truncation`, 400 context_length_exceeded
    // before anything is sent, and a usage when the upstream gives none.
    const upstream = await this.context.fit(this.deps.upstreamFor(request.model), {
      responseId: record.id,
      history,
      input,
      request,
    });
    const upstreamRequest = {
      model: request.model,
      input: context,
      newInput: input,
      previousResponseId: parentId,
      responseId: record.id,
      settings: forwardedSettings(request),
      sessionKey: this.deps.ownerId,
    };
    if (request.generate === false) {
      // Warm-up (brief §2.1): a chainable node with the request's input, no model output.
      store.create(record, input);
      upstream.prewarm?.(upstreamRequest);
      const live = this.deps.live.begin(record.id, sink, false);
      const turn = new TurnEmitter(live, store, record);
      turn.emit("response.created", { response: responseObject(record, []) });
      turn.emit("response.in_progress", { response: responseObject(record, []) });
      turn.complete({
        status: "completed",
        output: [],
        usage: ZERO_USAGE,
        error: null,
        incompleteDetails: null,
        completedAt: now(),
      });
      this.deps.live.end(record.id);
      return record.id;
    }

    let opened: Awaited<ReturnType<Upstream["open"]>>;
    try {
      opened = await upstream.open(upstreamRequest, signal);
    } catch (cause) {
      if (cause instanceof UpstreamError) {
        throw new ApiError(cause.status, {
          type: cause.type,
          code: cause.code,
          message: cause.message,
          param: null,
        });
      }
      throw cause;
    }

    store.create(record, input);
    const live = this.deps.live.begin(record.id, sink, record.store);
    try {
      return await this.stream(
        record,
        opened,
        new TurnEmitter(live, store, record),
        AbortSignal.any([signal, live.signal]),
      );
    } finally {
      this.deps.live.end(record.id);
    }
  }

  /** Steps 4–5: re-keys and emits the upstream's events, then commits and emits the terminal event. */
  private async stream(
    record: ResponseRecord,
    opened: UpstreamStream,
    turn: TurnEmitter,
    signal: AbortSignal,
  ): Promise<string> {
    const { now } = this.deps;
    turn.emit("response.created", { response: responseObject(record, []) });
    turn.emit("response.in_progress", { response: responseObject(record, []) });
    const rekey = new OutputRekeyer();
    const output: StoredItem[] = [];
    let outcome: ResponseOutcome | null = null;
    const handle = (event: UpstreamEvent) => {
      if (LIFECYCLE.has(event.type) || outcome) return;
      if (TERMINAL.has(event.type)) {
        outcome = terminalOutcome(event, rekey, output, now());
      } else if (event.type === "error") {
        outcome = failure(output, now(), errorOf(event));
      } else {
        const { type, sequence_number: _seq, ...fields } = rekey.event(event);
        if (type === "response.output_item.done" && typeof fields.output_index === "number") {
          output[fields.output_index] = fields.item as StoredItem;
        }
        turn.emit(String(type), fields);
      }
    };
    try {
      handle(opened.first);
      for await (const event of outcome ? [] : opened.rest) {
        handle(event);
        if (outcome || signal.aborted) break;
      }
    } catch (cause) {
      if (!signal.aborted) {
        const message = cause instanceof UpstreamError ? cause.message : "The upstream stream failed.";
        const code = cause instanceof UpstreamError ? cause.code : "server_error";
        outcome = failure(output, now(), { code, message });
      }
    }
    if (signal.aborted) {
      const reason: unknown = signal.reason;
      if (reason !== "cancelled" && reason !== "abandoned") return record.id; // store:false owner gone: nothing to keep
      outcome = {
        ...failure(output, now(), { code: "response_cancelled", message: `The response was ${reason}.` }),
        status: "cancelled",
      };
    }
    turn.complete(
      outcome ??
        failure(output, now(), {
          code: "server_error",
          message: "The upstream stream ended before the response completed.",
        }),
    );
    return record.id;
  }
}

/** Gives every input item an id (clients may omit them; stored items always have one). */
function assignIds(items: Item[]): StoredItem[] {
  return items.map((item) => {
    const serialized = JSON.stringify(item);
    if (serialized.length > MAX_ITEM_BYTES) {
      throw invalidRequest(
        `An input item is larger than ${MAX_ITEM_BYTES} bytes.`,
        "input",
        "item_too_large",
      );
    }
    return (item.id ? item : { ...item, id: newItemId(item.type) }) as StoredItem;
  });
}

function pickSettings(request: CreateRequest): Record<string, Json> {
  const settings: Record<string, Json> = { ...forwardedSettings(request) };
  if (request.metadata) settings.metadata = request.metadata;
  return settings;
}

function forwardedSettings(request: CreateRequest): Record<string, Json> {
  const settings: Record<string, Json> = {};
  for (const key of FORWARDED_SETTINGS) {
    const value = request[key];
    if (value !== undefined && value !== null) settings[key] = value as Json;
  }
  return settings;
}

function failure(
  output: StoredItem[],
  at: number,
  error: { code: string; message: string },
): ResponseOutcome {
  return {
    status: "failed",
    output: output.filter(Boolean),
    usage: null,
    error,
    incompleteDetails: null,
    completedAt: at,
  };
}

function errorOf(event: UpstreamEvent): { code: string; message: string } {
  return {
    code: typeof event.code === "string" ? event.code : "server_error",
    message: typeof event.message === "string" ? event.message : "The upstream reported an error.",
  };
}

function terminalOutcome(
  event: UpstreamEvent,
  rekey: OutputRekeyer,
  seen: StoredItem[],
  at: number,
): ResponseOutcome {
  const response = (
    typeof event.response === "object" && event.response !== null ? event.response : {}
  ) as Record<string, unknown>;
  const upstreamOutput = Array.isArray(response.output) ? response.output : null;
  const output = upstreamOutput
    ? upstreamOutput.map((item, index) => rekey.item(item, index))
    : seen.filter(Boolean);
  const status =
    event.type === "response.completed"
      ? "completed"
      : event.type === "response.incomplete"
        ? "incomplete"
        : "failed";
  return {
    status,
    output,
    usage: (response.usage as Json | undefined) ?? null,
    error:
      status === "failed"
        ? ((response.error as Json | undefined) ?? {
            code: "server_error",
            message: "The upstream response failed.",
          })
        : null,
    incompleteDetails:
      status === "incomplete" ? ((response.incomplete_details as Json | undefined) ?? null) : null,
    completedAt: at,
  };
}
