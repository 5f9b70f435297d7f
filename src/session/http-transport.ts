/**
 * The HTTP Responses API of a session Durable Object, on the same turn engine as the WebSocket
 * path. The Worker owns the routes and parses the requests (src/worker/responses-routes.ts); the
 * session Durable Object checks the tenant and calls one method here per route (RPC). Owns the
 * HTTP framing of engine results:
 * - create: `stream: true` → SSE from the moment the turn is accepted (a request Deltagate
 *   rejects is still a plain HTTP error with its status; an upstream failure after acceptance is
 *   the stream's `response.failed`); otherwise the terminal Response JSON, or for a response that
 *   did not complete the error with the upstream's status (a failure before its first event) or
 *   500;
 * - create with `background: true` (and no `stream`): the Response object (`queued`) as soon as
 *   the turn is accepted, the turn running on with no client (docs/background.md);
 * - retrieve (`stream` + `startingAfter` resumes the event stream: replay of the log, then live),
 *   delete, input items (cursor paging), cancel (every running store:true response; a cancelled
 *   background one answers its final object again).
 * Invariant: what the one visibility rule lets an HTTP caller `read` (visibility.ts: store:true
 * responses within retention) is visible; everything else is `Response with id '…' not found.`
 * (404).
 * Source: https://platform.openai.com/docs/api-reference/responses
 */
import type { EventSink } from "../engine/event-sink.ts";
import type { LiveRegistry } from "../engine/live-responses.ts";
import { listedItems, responseObject } from "../engine/response-object.ts";
import type { TurnEngine, TurnResult, TurnScope } from "../engine/turn-engine.ts";
import { SseStream } from "../http/sse-stream.ts";
import { TurnTimer } from "../pipeline/turn-timer.ts";
import {
  deltagateTiming,
  logTurn,
  serverTiming,
  type TimingOptIn,
  wantsTiming,
} from "../pipeline/turn-timing.ts";
import { genAiProvider, sampled, type Tracer, traceRefused, traceTurn } from "../pipeline/turn-trace.ts";
import type { CreateRequest } from "../protocol/create-request.ts";
import { ApiError, internalError, invalidRequest, responseNotFound } from "../protocol/errors.ts";
import { type ServerEvent, TERMINAL_EVENT_TYPES } from "../protocol/server-events.ts";
import type { ConversationStore, ResponseRecord } from "../store/conversation-store.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import type { AdmissionVerdict, Admitted } from "./admission.ts";
import { AFFINITY_BUSY_HEADER, type SecretTurnBinding } from "./internal-headers.ts";
import { newScopeId } from "./scope.ts";
import { maySee, type VisibilitySettings } from "./visibility.ts";

/** Collaborators of the HTTP transport. */
export interface HttpTransportDeps {
  engine: TurnEngine;
  store: ConversationStore;
  live: LiveRegistry;
  /** The one visibility rule's settings (visibility.ts): older responses are not found. */
  visibility: VisibilitySettings;
  now(): number;
  /** Keeps a background promise alive (`ctx.waitUntil`). */
  track(promise: Promise<unknown>): void;
  /** Write one log line per turn (`TURN_LOG`, src/pipeline/turn-timing.ts). */
  turnLog: boolean;
  /** The runtime's tracer (src/pipeline/turn-trace.ts), null where it has none: a sampled turn's spans. */
  tracer?: Tracer | null;
  /** The session Durable Object's id (hex), on a sampled turn's span. */
  objectId?: string;
  /** A model's `gen_ai.provider.name` (turn-trace.ts `genAiProvider` of its route), on a sampled turn's span. */
  providerOf?(model: string): string;
}

/** What the Worker knows about a `POST /v1/responses` besides its body. */
export interface CreateOptions {
  /** Timing the client asked for (its headers, turn-timing.ts). */
  timing?: TimingOptIn;
  /** Ms the Worker spent reading, decompressing, parsing and validating the body. */
  parseMs?: number;
  /**
   * The Worker chose this session by the request's affinity key (src/worker/affinity.ts): past
   * `AFFINITY_MAX_RUNNING` running responses the session declines it (the Worker goes elsewhere).
   */
  affinity?: boolean;
  /** The client secret's binding, when the request was authenticated by one (the session's admission applies it). */
  binding?: SecretTurnBinding;
  /** False when the client turned `keepalive` events off (`x-deltagate-keepalive: 0`, client-options.ts). */
  keepalive?: boolean;
  /**
   * The caller's tenant snapshot (src/tenancy/tenant.ts) and the request's size, for its limits and
   * usage. No snapshot rides with a turn another session relayed (conversation-relay.ts): the
   * session admits it with its own view of its tenant (admission.ts).
   */
  tenancy?: { tenant?: Tenant; bytes: number };
  /**
   * The key of the socket whose `response.create` another session of the tenant relayed here
   * (conversation-relay.ts): the call is admitted and metered under it.
   */
  relayedKeyId?: string;
}

/** What the Worker knows about a `POST /v1/responses/compact` or `…/input_tokens` besides its body. */
export type UnaryOptions = Pick<CreateOptions, "binding" | "tenancy">;

/** `GET /v1/responses/{id}` options. */
export interface RetrieveOptions {
  /** Stream the response's events (SSE) instead of returning the object. */
  stream: boolean;
  /** Replay only events with a larger `sequence_number` (-1 = all). */
  startingAfter: number;
}

/** `GET /v1/responses/{id}/input_items` paging. */
export interface InputItemsPage {
  /** Item id to list after (exclusive), or null from the start. */
  after: string | null;
  limit: number;
  order: "asc" | "desc";
}

const NEVER_ABORTED = new AbortController().signal;

/**
 * Responses running in one session beyond which it declines an affinity-routed request (the bound
 * on one hot affinity key, src/worker/affinity.ts).
 */
export const AFFINITY_MAX_RUNNING = 32;

/** HTTP handlers of one session Durable Object (the tenant is checked before any is called). */
export class HttpTransport {
  private readonly deps: HttpTransportDeps;

  constructor(deps: HttpTransportDeps) {
    this.deps = deps;
  }

  /**
   * `POST /v1/responses`, validated by the Worker: declined when too busy for an affinity-routed
   * request (before anything is counted), else admitted by the session's one admission
   * (admission.ts), then run. A sampled invocation runs it in its turn's span
   * (src/pipeline/turn-trace.ts), admission included, ended with the turn's log line.
   * @param admit the session's one admission of this request: the key that made it (the usage
   *   ledger's key), the model to send and what it reserved (given back when the turn ends
   *   unbooked), or the error to answer — now when the session's lease covers it, else a promise.
   */
  create(
    request: CreateRequest,
    tenant: string,
    options: CreateOptions,
    admit: () => AdmissionVerdict | Promise<AdmissionVerdict>,
  ): Promise<Response> {
    // The clock starts when the Worker started reading the body.
    const timer = new TurnTimer(undefined, performance.now() - (options.parseMs ?? 0));
    const tracer = this.deps.tracer;
    if (!sampled(tracer)) return this.admitAndRun(request, tenant, options, admit, timer);
    const turn = {
      transport: "http",
      session: this.deps.objectId ?? "",
      model: request.model,
      provider: (model: string) => this.deps.providerOf?.(model) ?? genAiProvider(null),
      store: request.store ?? true,
      stream: request.stream === true,
    } as const;
    return traceTurn(tracer, turn, (trace) => {
      timer.trace = trace;
      return this.admitAndRun(request, tenant, options, admit, timer);
    });
  }

  /** Declined or admitted (a sampled turn's `admission` span), then the turn. */
  private async admitAndRun(
    request: CreateRequest,
    tenant: string,
    options: CreateOptions,
    admit: () => AdmissionVerdict | Promise<AdmissionVerdict>,
    timer: TurnTimer,
  ): Promise<Response> {
    const admission = timer.trace?.start("admission");
    const busy = options.affinity === true && this.deps.live.size >= AFFINITY_MAX_RUNNING;
    let verdict: AdmissionVerdict | null = null;
    try {
      // Declined before anything is counted; else admitted, without awaiting on the warm path (a
      // lease that covers the call, admission.ts).
      const pending = busy ? null : admit();
      verdict = pending instanceof Promise ? await pending : pending;
    } catch (error) {
      admission?.end();
      traceRefused(timer, error instanceof ApiError ? (error.code ?? error.type) : "server_error");
      throw error;
    }
    admission?.end();
    if (verdict === null) {
      traceRefused(timer, "affinity_busy");
      return new Response(null, { status: 503, headers: { [AFFINITY_BUSY_HEADER]: "1" } });
    }
    if (verdict instanceof ApiError) {
      traceRefused(timer, verdict.code ?? verdict.type);
      throw verdict;
    }
    if (verdict.model !== null) request.model = verdict.model;
    timer.trace?.admitted(request.model);
    return this.run(request, tenant, options, verdict, timer);
  }

  /** Runs an admitted turn (`request.model`: the admitted model, aliases resolved). */
  private async run(
    request: CreateRequest,
    tenant: string,
    options: CreateOptions,
    admitted: Admitted,
    timer: TurnTimer,
  ): Promise<Response> {
    // store:false over HTTP lives only for this request: a scope nobody else can name.
    const scope: TurnScope = {
      connId: newScopeId("http"),
      tenant,
      keepalive: options.keepalive !== false,
      keyId: admitted.keyId,
      ...(admitted.reservation ? { reservation: admitted.reservation } : {}),
    };
    const cleanup = () => {
      this.deps.store.deleteConnectionScoped(scope.connId);
      admitted.release(); // a turn that ended unbooked (a booked one settled it)
    };
    timer.lap("parse");
    const timed = wantsTiming(options.timing);
    if (request.stream) return this.createStreaming(request, scope, cleanup, timer, timed);
    if (request.background) return this.createInBackground(request, scope, cleanup, timer);

    let terminal: ServerEvent | null = null;
    let result: TurnResult;
    try {
      result = await this.deps.engine.run(
        request,
        scope,
        {
          send: (event) => {
            if (TERMINAL_EVENT_TYPES.has(event.type)) terminal = event;
          },
        },
        NEVER_ABORTED,
        timer,
      );
    } catch (error) {
      this.log(request, timer, null, error);
      throw error;
    } finally {
      cleanup();
    }
    this.log(request, timer, result.responseId, null);
    const final = terminal as ServerEvent | null;
    if (!final) throw internalError();
    if (result.failure) {
      const response = final.response as {
        status?: string;
        error: { code?: string; message?: string } | null;
      };
      // A cancelled response has no error (OpenAI's `error: null`): the answer names the cancellation.
      const cancelled = response.status === "cancelled";
      const error = response.error;
      throw new ApiError(result.failure.status, {
        type: result.failure.type,
        code: error?.code ?? (cancelled ? "response_cancelled" : "server_error"),
        message: error?.message ?? (cancelled ? "The response was cancelled." : "The response failed."),
        param: null,
      });
    }
    const headers: Record<string, string> = timed ? { "server-timing": serverTiming(timer.stages()) } : {};
    return Response.json(final.response, { headers });
  }

  /** The turn's log line (`TURN_LOG`). */
  private log(request: CreateRequest, timer: TurnTimer, responseId: string | null, error: unknown): void {
    timer.end();
    const refused = error instanceof ApiError ? (error.code ?? error.type) : error ? "server_error" : null;
    timer.trace?.finish(timer.stages(), timer.facts(), refused);
    if (!this.deps.turnLog) return;
    logTurn({
      transport: "http",
      responseId,
      model: request.model,
      store: request.store ?? true,
      error: refused,
      stages: timer.stages(),
      facts: timer.facts(),
    });
  }

  private async createStreaming(
    request: CreateRequest,
    scope: TurnScope,
    cleanup: () => void,
    timer: TurnTimer,
    timed: boolean,
  ): Promise<Response> {
    const sse = new SseStream();
    // With timing asked for, the stream ends with a `deltagate.timing` event after the terminal one.
    if (timed) sse.holdOpen();
    let started!: () => void;
    const firstEvent = new Promise<"started">((resolve) => {
      started = () => resolve("started");
    });
    const sink: EventSink = {
      send: (event, json) => {
        started();
        sse.send(event, json);
      },
    };
    // A store:false stream dies with its client; a store:true one keeps going (resumable).
    const abort = new AbortController();
    sse.onCancel(() => {
      this.deps.live.detachEverywhere(sink);
      if (request.store === false) abort.abort("client gone");
    });
    const run = this.deps.engine.run(request, scope, sink, abort.signal, timer).finally(cleanup);
    this.deps.track(
      run.then(
        ({ responseId }) => {
          this.log(request, timer, responseId, null);
          if (timed) sse.trailer(deltagateTiming(responseId, timer.stages(), timer.facts()));
        },
        (error: unknown) => {
          this.log(request, timer, null, error);
          sse.close();
        },
      ),
    );
    // Wait for the first event (`response.created`, sent once the turn is accepted), so a request
    // Deltagate rejects is still a plain HTTP error status.
    await Promise.race([firstEvent, run]);
    // Headers leave now, with response.created: the stages known so far (the edge's).
    return sse.response(timed ? { "server-timing": serverTiming(timer.stages()) } : {});
  }

  /**
   * `POST /v1/responses` with `background: true` and no `stream`: answers the Response object as
   * soon as the turn is accepted (`status: "queued"`, the object of `response.created`); the turn
   * runs on in this Durable Object with no client attached (docs/background.md). A request
   * Deltagate rejects before accepting it is still a plain HTTP error with its status.
   */
  private async createInBackground(
    request: CreateRequest,
    scope: TurnScope,
    cleanup: () => void,
    timer: TurnTimer,
  ): Promise<Response> {
    let announce!: (event: ServerEvent) => void;
    const created = new Promise<ServerEvent>((resolve) => {
      announce = resolve;
    });
    // The creator's sink hears the turn's events: only its announcement is answered.
    const sink: EventSink = {
      send: (event) => {
        if (event.type === "response.created") announce(event);
      },
    };
    const run = this.deps.engine.run(request, scope, sink, NEVER_ABORTED, timer).finally(cleanup);
    this.deps.track(
      run.then(
        ({ responseId }) => this.log(request, timer, responseId, null),
        (error: unknown) => this.log(request, timer, null, error),
      ),
    );
    const first = await Promise.race([created, run]);
    if (!("type" in first)) throw internalError(); // the turn ended without being announced
    return Response.json(first.response);
  }

  /** `GET /v1/responses/{id}`: the Response object, or its event stream (resumable). */
  retrieve(id: string, options: RetrieveOptions): Response {
    const record = this.visible(id);
    if (!options.stream) return Response.json(responseObject(record, this.deps.store.items(id, "output")));
    const sse = new SseStream();
    const live = this.deps.live.replay(id, options.startingAfter, sse, () =>
      this.deps.store.eventLogs.read(id),
    );
    if (live) sse.onCancel(() => live.detach(sse));
    else sse.close();
    return sse.response();
  }

  /** `DELETE /v1/responses/{id}`: cancels it if running, then deletes it with its items and log. */
  remove(id: string): Response {
    this.visible(id);
    this.deps.live.get(id)?.cancel("cancelled");
    this.deps.store.delete(id);
    return Response.json({ id, object: "response", deleted: true });
  }

  /**
   * `GET /v1/responses/{id}/input_items`: one page of the items the response was generated from:
   * for a chained response, the whole chain's items (history(parent)), then its own input — as
   * OpenAI lists them ("A list of items used to generate this response", `ResponseItemList` in
   * the openai SDK). A chain cut by a deletion or expiry starts at its new root.
   */
  inputItems(id: string, page: InputItemsPage): Response {
    const record = this.visible(id);
    const { store } = this.deps;
    let items = [...(record.parentId ? store.history(record.parentId) : []), ...store.items(id, "input")];
    if (page.order === "desc") items = items.reverse();
    if (page.after) {
      const index = items.findIndex((item) => item.id === page.after);
      if (index < 0) throw invalidRequest(`No input item with id '${page.after}' in this response.`, "after");
      items = items.slice(index + 1);
    }
    const data = listedItems(items.slice(0, page.limit), record.settings.include);
    return Response.json({
      object: "list",
      data,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
      has_more: items.length > data.length,
    });
  }

  /**
   * `POST /v1/responses/{id}/cancel`: ends a running response; answers its final object. A
   * background response cancelled already answers its final object again ("Cancelling twice is
   * idempotent", https://developers.openai.com/api/docs/guides/background). Foreground store:true
   * responses stay cancellable too (a Deltagate extension: OpenAI cancels only background ones).
   */
  async cancel(id: string): Promise<Response> {
    const current = this.visible(id);
    const live = this.deps.live.get(id);
    if (!live && current.background && current.status === "cancelled") {
      return Response.json(responseObject(current, this.deps.store.items(id, "output")));
    }
    if (!live) {
      throw invalidRequest(
        `Response with id '${id}' is not in progress and cannot be cancelled.`,
        null,
        "response_not_cancellable",
      );
    }
    const ended = new Promise<void>((resolve) => {
      const sink: EventSink = { send: (event) => TERMINAL_EVENT_TYPES.has(event.type) && resolve() };
      live.subscribe(sink, Number.MAX_SAFE_INTEGER);
    });
    live.cancel("cancelled");
    await ended;
    const record = this.deps.store.get(id);
    if (!record) throw responseNotFound(id);
    return Response.json(responseObject(record, this.deps.store.items(id, "output")));
  }

  /** The response, when the one visibility rule lets an HTTP caller read it, or a 404. */
  private visible(id: string): ResponseRecord {
    const record = this.deps.store.get(id);
    if (!record || !maySee(record, null, "read", this.deps.now(), this.deps.visibility)) {
      throw responseNotFound(id);
    }
    return record;
  }
}
