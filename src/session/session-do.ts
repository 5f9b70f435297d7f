/**
 * The session Durable Object: one instance per (tenant, session). It owns the session's client
 * WebSockets (hibernation API: `ctx.acceptWebSocket`, never `ws.accept()`), its conversation
 * state in SQLite, and its alarm (connection lifetime, retention). It composes modules and
 * contains none of their logic: storage (`ConversationStore`), turns (`TurnEngine`), the stages
 * around each turn's upstream (`createTurnPipeline`, src/pipeline/), frames (`WebSocketTransport`),
 * HTTP (`HttpTransport`, reached through one RPC method per route of the Worker's route table),
 * sockets (`ConnectionRegistry`), live responses (`LiveRegistry`), upstreams (`UpstreamRouter`;
 * warmed when a client connects, kept warm by `ClientPresence`), the tenant's limits and usage
 * (`SessionTenancy`, src/tenancy/).
 * Every entry point (the socket upgrade, each RPC method) passes the one tenant check (`admits`).
 * Invariants: store:false state lives as long as the socket (or HTTP request) that created it —
 * it is kept in SQLite so it survives hibernation of a live socket — plus, for a socket, the
 * grace window `STORE_FALSE_GRACE_MS` after it closed or was found gone (src/store/released-scopes.ts;
 * the window is enforced on every frame, every export and by the alarm); no response stays
 * `in_progress` across a restart; the session belongs to one tenant forever.
 * Source: https://developers.cloudflare.com/durable-objects/best-practices/websockets/
 */
import { DurableObject } from "cloudflare:workers";
import { type Config, parseConfig } from "../config/config.ts";
import type { Env } from "../config/env.ts";
import { ContextWindow } from "../context/context-window.ts";
import { LiveRegistry } from "../engine/live-responses.ts";
import { recoverInterrupted } from "../engine/recovery.ts";
import { TurnEngine, type TurnScope } from "../engine/turn-engine.ts";
import { createTurnPipeline } from "../pipeline/pipeline.ts";
import type { CreateRequest } from "../protocol/create-request.ts";
import { asApiError, errorResponse } from "../protocol/error-rendering.ts";
import {
  type ApiError,
  invalidRequest,
  previousResponseNotFound,
  responseNotFound,
} from "../protocol/errors.ts";
import type { StoredItem } from "../protocol/items.ts";
import { SessionSafety } from "../safety/session-safety.ts";
import type { ChainRow } from "../safety/verdict-cache.ts";
import { ConversationStore, type ResponseRecord } from "../store/conversation-store.ts";
import { claimTenant, ownerTenant } from "../store/session-meta.ts";
import { SessionTenancy } from "../tenancy/session-tenancy.ts";
import { ClientPresence } from "../upstream/client-presence.ts";
import { createAdapter, UpstreamRouter } from "../upstream/router.ts";
import { responseOwner } from "../util/ids.ts";
import { attachmentOf, ConnectionRegistry } from "./connection.ts";
import {
  type CreateOptions,
  HttpTransport,
  type InputItemsPage,
  type RetrieveOptions,
} from "./http-transport.ts";
import { SESSION_HEADER, TENANT_HEADER } from "./internal-headers.ts";
import { mayContinue, newScopeId, scopeKind, sharedWithSockets } from "./scope.ts";
import { timingOptIn, wantsTiming } from "./turn-timing.ts";
import { WebSocketTransport } from "./ws-transport.ts";

/** Close codes that may not be sent in a Close frame (RFC 6455 §7.4.1), so `ws.close()` refuses them. */
const RESERVED_CLOSE_CODES = new Set([1004, 1005, 1006, 1015]);

/**
 * The model a client announces on its upgrade: Codex sends its turn metadata, including `model`,
 * as JSON in `x-codex-turn-metadata` (test/fixtures/codex/upgrade-headers.json). Null when absent
 * or unreadable.
 */
function modelHint(headers: Headers): string | null {
  const raw = headers.get("x-codex-turn-metadata");
  if (!raw || raw.length > 8192) return null;
  try {
    const model: unknown = (JSON.parse(raw) as { model?: unknown }).model;
    return typeof model === "string" && model.length > 0 && model.length <= 256 ? model : null;
  } catch {
    return null;
  }
}

/** A response copied between sessions: its record, flattened history and output. */
interface ExportedResponse {
  record: ResponseRecord;
  /** history(parent) + the response's own input, oldest first. */
  input: StoredItem[];
  output: StoredItem[];
  /** Policies its chain was safety-checked under (src/safety/verdict-cache.ts). */
  safety?: ChainRow[];
}

/** One agent session: its sockets, conversation state and turns. */
export class SessionDurableObject extends DurableObject<Env> {
  private readonly config: Config;
  private readonly store: ConversationStore;
  private readonly connections = new ConnectionRegistry();
  private readonly live: LiveRegistry;
  private readonly ws: WebSocketTransport;
  private readonly http: HttpTransport;
  private readonly safety: SessionSafety;
  private readonly router: UpstreamRouter;
  /** The session's client sockets, for the warm upstream socket's keep-warm policy. */
  private readonly presence: ClientPresence;
  /** The tenant's limits, settings and usage ledger, seen from this session (src/tenancy/). */
  private readonly tenancy: SessionTenancy;
  /** The latest warm-up on connect: settles once its upstream connection is open or failed. */
  warming: Promise<void> = Promise.resolve();
  /**
   * The alarm time (ms) this instance last set or read, null when none is set, undefined before it
   * read it: every request re-arms the alarm (`scheduleAlarm`), and reading it back from storage
   * each time would put a storage round trip on every request.
   */
  private alarmAt: number | null | undefined = undefined;

  /**
   * Runs on every wake: migrates the schema and ends the responses an earlier instance left
   * running (failed, with the output their event log shows was sent: src/engine/recovery.ts).
   */
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.config = parseConfig(env);
    this.store = new ConversationStore(ctx.storage);
    recoverInterrupted(this.store, Date.now());
    // No HTTP request survives a restart, so no store:false state of one may either; a socket
    // that is gone (a deploy ends them all) starts its grace window now.
    const open = this.openScopes();
    for (const scope of this.store.connectionsWithScopedState()) {
      if (scopeKind(scope) === "http") this.store.deleteConnectionScoped(scope);
      else if (!open.has(scope)) this.releaseScope(scope);
    }
    this.live = new LiveRegistry(this.config.abandonGraceMs);
    this.presence = new ClientPresence(this.openScopes());
    const adapterDefaults = { ...this.config, presence: this.presence };
    const router = new UpstreamRouter(this.config.routes, (route) => createAdapter(route, adapterDefaults));
    this.router = router;
    const window = new ContextWindow(this.store);
    this.tenancy = new SessionTenancy({
      ctx,
      env,
      config: this.config,
      tenant: () => ownerTenant(ctx.storage.sql),
      sockets: () => ctx.getWebSockets().map((ws) => ({ ws, attachment: attachmentOf(ws) })),
    });
    this.safety = new SessionSafety({
      settings: this.tenancy.safety,
      sql: ctx.storage.sql,
      tenant: () => ownerTenant(ctx.storage.sql),
      ai: env.AI ?? null,
    });
    const pipeline = createTurnPipeline({
      routeChain: (model) => router.upstreamFor(model),
      window,
      safety: this.safety,
      redactor: this.config.redactor,
    });
    const engine = new TurnEngine({
      store: this.store,
      history: (parentId) => window.history(parentId),
      upstreamFor: (turn) => pipeline.upstreamFor(turn),
      ownerId: ctx.id.toString(),
      now: Date.now,
      keepaliveMs: this.config.keepaliveMs,
      live: this.live,
      importRemote: (id, scope) => this.importRemote(id, scope),
      mayContinue: (owner, scope) => mayContinue(owner, scope.connId, this.config.storeFalseGraceMs),
      finished: (scope, record, outcome) => {
        this.tenancy.finished(scope, record, outcome);
        ctx.waitUntil(this.scheduleAlarm()); // the outbox's flush deadline
      },
    });
    const shared = {
      engine,
      store: this.store,
      live: this.live,
      now: Date.now,
      turnLog: this.config.turnLog,
    };
    this.ws = new WebSocketTransport({
      ...shared,
      maxConnectionMs: this.config.maxConnectionMs,
      redactor: this.config.redactor,
      admit: (_conn, request, bytes) => this.tenancy.admit(request, bytes),
    });
    this.http = new HttpTransport({
      ...shared,
      retentionMs: this.config.retentionMs,
      track: (promise) => ctx.waitUntil(promise),
    });
  }

  /**
   * The WebSocket upgrade of `GET /v1/responses`, forwarded by the Worker (authenticated; the
   * tenant and session travel in the upgrade headers, internal-headers.ts). Everything else
   * reaches the session through the RPC methods below.
   */
  override async fetch(request: Request): Promise<Response> {
    const tenant = request.headers.get(TENANT_HEADER);
    const sessionId = request.headers.get(SESSION_HEADER);
    if (!tenant || !sessionId || request.headers.get("upgrade")?.toLowerCase() !== "websocket") {
      return errorResponse(invalidRequest("Missing session routing headers."), this.config.redactor);
    }
    return this.serve(
      tenant,
      "claim",
      () => invalidRequest("This session cannot be opened with this key."),
      async () => {
        const keys = await this.tenancy.upgrading(request.headers);
        const { 0: client, 1: server } = new WebSocketPair();
        const connId = newScopeId("socket");
        this.ctx.acceptWebSocket(server, [connId]);
        const timing = timingOptIn(request.headers, request.url);
        this.connections.add(server, {
          connId,
          tenant,
          sessionId,
          openedAt: Date.now(),
          ...(wantsTiming(timing) ? { timing } : {}),
          ...keys,
        });
        this.presence.opened(connId);
        this.warmUpstream(modelHint(request.headers));
        return new Response(null, { status: 101, webSocket: client });
      },
    );
  }

  /** RPC, `POST /v1/responses` (validated by the Worker): runs a turn. */
  createResponse(tenant: string, request: CreateRequest, options: CreateOptions = {}): Promise<Response> {
    const parent = request.previous_response_id;
    return this.serve(
      tenant,
      "claim",
      // Routed here by another tenant's previous_response_id: not found, like every foreign id.
      () =>
        parent ? previousResponseNotFound(parent) : invalidRequest("This session belongs to another tenant."),
      async () => {
        const { bytes = 0, tenant: snapshot } = options.tenancy ?? {};
        const refused = await this.tenancy.admitHttp(request, bytes, snapshot);
        if (refused) throw refused;
        return this.http.create(request, tenant, options);
      },
    );
  }

  /** RPC, `GET /v1/responses/{id}` (`stream=true&starting_after=N` resumes its events). */
  retrieveResponse(tenant: string, id: string, options: RetrieveOptions): Promise<Response> {
    return this.serve(
      tenant,
      "read",
      () => responseNotFound(id),
      () => this.http.retrieve(id, options),
    );
  }

  /** RPC, `DELETE /v1/responses/{id}`. */
  deleteResponse(tenant: string, id: string): Promise<Response> {
    return this.serve(
      tenant,
      "read",
      () => responseNotFound(id),
      () => this.http.remove(id),
    );
  }

  /** RPC, `GET /v1/responses/{id}/input_items`. */
  listInputItems(tenant: string, id: string, page: InputItemsPage): Promise<Response> {
    return this.serve(
      tenant,
      "read",
      () => responseNotFound(id),
      () => this.http.inputItems(id, page),
    );
  }

  /** RPC, `POST /v1/responses/{id}/cancel`. */
  cancelResponse(tenant: string, id: string): Promise<Response> {
    return this.serve(
      tenant,
      "read",
      () => responseNotFound(id),
      () => this.http.cancel(id),
    );
  }

  /** Hibernation handler: one client frame. */
  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const conn = this.connections.get(ws);
    if (!conn) return;
    this.purgeScopes(); // a late alarm must not stretch the store:false window
    this.presence.active();
    this.ws.onMessage(conn, message, (run) => this.ctx.waitUntil(run));
  }

  /** Hibernation handler: the client closed; its store:false state starts its grace window. */
  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.release(ws);
    try {
      ws.close(RESERVED_CLOSE_CODES.has(code) ? 1000 : code, reason.slice(0, 120));
    } catch {
      // already closed (the runtime auto-replies to Close frames)
    }
    await this.scheduleAlarm(); // the end of its grace window
  }

  /** Hibernation handler: the socket failed; treated as a close. */
  override async webSocketError(ws: WebSocket): Promise<void> {
    this.release(ws);
    await this.scheduleAlarm();
  }

  /**
   * Alarm: closes sockets past the connection lifetime with `websocket_connection_limit_reached`,
   * starts the grace window of store:false state whose socket vanished without a close event,
   * purges store:false state whose window ended, expires store:true responses past the retention
   * period, and re-arms itself for the next deadline.
   */
  override async alarm(): Promise<void> {
    this.alarmAt = null; // it fired: none is set until `scheduleAlarm` below
    for (const ws of this.ctx.getWebSockets()) {
      const conn = this.connections.get(ws);
      if (conn && this.ws.expired(conn, true)) this.ws.closeForLifetime(conn);
    }
    const live = this.openScopes();
    for (const connId of this.store.connectionsWithScopedState()) {
      // HTTP scopes are deleted by their request; only sockets can vanish without notice.
      if (scopeKind(connId) === "socket" && !live.has(connId)) {
        this.presence.closed(connId);
        this.releaseScope(connId);
      }
    }
    this.purgeScopes();
    this.store.expireBefore(Date.now() - this.config.retentionMs);
    await this.tenancy.flush(); // usage the session has not reported yet (no loss on eviction)
    await this.scheduleAlarm();
  }

  /**
   * RPC: exports a response of `tenant` for another session of the same tenant: a store:true
   * one, or, when `toSocket` (the importer continues it from a WebSocket), a store:false one that
   * a socket of the tenant may still continue (`mayContinue`, within the grace window).
   * @returns the `ExportedResponse` as JSON text (RPC's structural types recurse too deeply on
   *   JSON values), or null when the response is unknown, not visible, running, expired or another
   *   tenant's.
   */
  async exportResponse(id: string, tenant: string, toSocket = false): Promise<string | null> {
    if (!this.admits(tenant, "read")) return null;
    this.purgeScopes();
    const record = this.store.get(id);
    if (!record) return null;
    if (record.store ? record.createdAt < Date.now() - this.config.retentionMs : !toSocket) return null;
    if (record.connId && !sharedWithSockets(record.connId, this.config.storeFalseGraceMs)) return null;
    if (record.status === "in_progress" || record.status === "queued") return null;
    const history = record.parentId ? this.store.history(record.parentId) : [];
    const exported: ExportedResponse = {
      record,
      input: [...history, ...this.store.items(id, "input")],
      output: this.store.items(id, "output"),
      safety: this.safety.exportChain(id),
    };
    return JSON.stringify(exported);
  }

  /**
   * Imports a response from the session Durable Object that owns it (see `exportResponse`); an
   * imported store:false response stays store:false here, owned by the importing socket's scope.
   */
  private async importRemote(id: string, scope: TurnScope): Promise<boolean> {
    const owner = responseOwner(id);
    if (!owner || owner === this.ctx.id.toString()) return false;
    let exported: ExportedResponse | null;
    try {
      const stub = this.env.SESSIONS.get(this.env.SESSIONS.idFromString(owner));
      const toSocket = scopeKind(scope.connId) === "socket";
      const text: string | null = await stub.exportResponse(id, scope.tenant, toSocket);
      exported = text === null ? null : (JSON.parse(text) as ExportedResponse);
    } catch {
      return false; // not an id of this namespace, or the owner is unreachable: treat as not found
    }
    if (!exported || this.store.get(id)) return this.store.get(id) !== null;
    const { record, input, output } = exported;
    const connId = record.store ? null : scope.connId;
    this.store.create({ ...record, parentId: null, connId, status: "in_progress" }, input);
    this.store.finish(
      id,
      {
        status: record.status === "in_progress" || record.status === "queued" ? "failed" : record.status,
        output,
        usage: record.usage,
        error: record.error,
        incompleteDetails: record.incompleteDetails,
        completedAt: record.completedAt ?? Date.now(),
      },
      null,
    );
    this.safety.importChain(id, exported.safety ?? []);
    await this.scheduleAlarm();
    return true;
  }

  /**
   * The one tenant check of a session: it belongs to the tenant that first used it, forever
   * (src/store/session-meta.ts). `claim` (a turn, a socket) takes an unowned session; `read` (a
   * response by id, an export) needs the session to be the tenant's already.
   */
  private admits(tenant: string, access: "claim" | "read"): boolean {
    const sql = this.ctx.storage.sql;
    return access === "claim" ? claimTenant(sql, tenant) : ownerTenant(sql) === tenant;
  }

  /**
   * Runs one request of `tenant`: the tenant check (`denied` is the error when it fails), the
   * handler, errors rendered as OpenAI's envelope, then the alarm re-armed for new deadlines.
   */
  private async serve(
    tenant: string,
    access: "claim" | "read",
    denied: () => ApiError,
    handler: () => Response | Promise<Response>,
  ): Promise<Response> {
    try {
      if (!this.admits(tenant, access)) throw denied();
      return await handler();
    } catch (cause) {
      const { redactor } = this.config;
      return errorResponse(asApiError(cause, "session request failed", redactor), redactor);
    } finally {
      await this.scheduleAlarm();
    }
  }

  private release(ws: WebSocket): void {
    const conn = this.connections.remove(ws);
    for (const sink of conn?.sinks.values() ?? []) this.live.detachEverywhere(sink);
    const attachment = conn?.attachment ?? attachmentOf(ws);
    this.tenancy.released(attachment);
    const connId = attachment?.connId;
    if (!connId) return;
    this.presence.closed(connId);
    this.releaseScope(connId);
  }

  /**
   * A socket scope is closed: its store:false state starts its grace window, or, with no window,
   * is deleted now.
   */
  private releaseScope(connId: string): void {
    if (this.config.storeFalseGraceMs === 0) this.store.deleteConnectionScoped(connId);
    else this.store.scopes.release(connId, Date.now());
  }

  /**
   * Opens the upstream connection of the session's likely route — the model the client announced
   * (`hint`), else the model of the session's latest turn, else the first advertised model
   * (`MODELS`) — so the first turn pays no connection setup. Only adapters with a connection of
   * their own do anything (Responses WebSocket mode).
   */
  private warmUpstream(hint: string | null): void {
    const model = hint ?? this.store.lastModel() ?? this.config.models[0];
    if (!model) return;
    try {
      this.warming = this.router.upstreamFor(model).preconnect?.() ?? Promise.resolve();
    } catch {
      return; // the model has no route: its first turn will say so
    }
    this.ctx.waitUntil(this.warming);
  }

  /** Deletes the store:false state whose grace window has ended. */
  private purgeScopes(): void {
    this.store.scopes.purge(Date.now() - this.config.storeFalseGraceMs);
  }

  /** The scope ids of this session's open sockets. */
  private openScopes(): Set<string> {
    const open = new Set<string>();
    for (const ws of this.ctx.getWebSockets()) {
      const connId = attachmentOf(ws)?.connId;
      if (connId && ws.readyState === WebSocket.OPEN) open.add(connId);
    }
    return open;
  }

  /**
   * Arms the alarm for the earliest deadline: a connection lifetime, the end of a store:false
   * grace window, or a retention expiry.
   */
  private async scheduleAlarm(): Promise<void> {
    let earliest = Number.POSITIVE_INFINITY;
    for (const ws of this.ctx.getWebSockets()) {
      const openedAt = attachmentOf(ws)?.openedAt;
      if (openedAt !== undefined && ws.readyState === WebSocket.OPEN) {
        earliest = Math.min(earliest, openedAt + this.config.maxConnectionMs);
      }
    }
    const oldest = this.store.oldestStored();
    if (oldest !== null) earliest = Math.min(earliest, oldest + this.config.retentionMs);
    const released = this.store.scopes.earliest();
    if (released !== null) earliest = Math.min(earliest, released + this.config.storeFalseGraceMs);
    const usage = this.tenancy.deadline();
    if (usage !== null) earliest = Math.min(earliest, usage);
    if (earliest === Number.POSITIVE_INFINITY) return;
    if (this.alarmAt === undefined) this.alarmAt = await this.ctx.storage.getAlarm();
    if (this.alarmAt === null || this.alarmAt > earliest) {
      this.alarmAt = earliest; // before the await, so a concurrent request does not arm a later one
      await this.ctx.storage.setAlarm(earliest);
    }
  }
}
