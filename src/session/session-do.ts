/**
 * The session Durable Object: one instance per (tenant, session). It owns the session's client
 * WebSockets (hibernation API: `ctx.acceptWebSocket`, never `ws.accept()`), its conversation
 * state in SQLite, and its alarm (connection lifetime, retention). It composes modules and
 * contains none of their logic: storage (`ConversationStore`), turns (`TurnEngine`), the stages
 * around each turn's upstream (`createTurnPipeline`, src/pipeline/), frames (`WebSocketTransport`),
 * HTTP (`HttpTransport`, reached through one RPC method per route of the Worker's route table),
 * sockets (`ConnectionRegistry`), live responses (`LiveRegistry`), upstreams (`UpstreamRouter`).
 * Every entry point (the socket upgrade, each RPC method) passes the one tenant check (`admits`).
 * Invariants: store:false state lives only as long as the socket (or HTTP request) that created
 * it — it is kept in SQLite so it survives hibernation of a live socket, and deleted when the
 * socket closes or is found gone; no response stays `in_progress` across a restart; the session
 * belongs to one tenant forever.
 * Source: https://developers.cloudflare.com/durable-objects/best-practices/websockets/
 */
import { DurableObject } from "cloudflare:workers";
import { type Config, parseConfig } from "../config/config.ts";
import type { Env } from "../config/env.ts";
import { ContextWindow } from "../context/context-window.ts";
import { LiveRegistry } from "../engine/live-responses.ts";
import { recoverInterrupted } from "../engine/recovery.ts";
import { TurnEngine } from "../engine/turn-engine.ts";
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
import { ConversationStore, type ResponseRecord } from "../store/conversation-store.ts";
import { claimTenant, ownerTenant } from "../store/session-meta.ts";
import { createAdapter, UpstreamRouter } from "../upstream/router.ts";
import { responseOwner } from "../util/ids.ts";
import { attachmentOf, ConnectionRegistry } from "./connection.ts";
import { HttpTransport, type InputItemsPage, type RetrieveOptions } from "./http-transport.ts";
import { SESSION_HEADER, TENANT_HEADER } from "./internal-headers.ts";
import { newScopeId, scopeKind } from "./scope.ts";
import { WebSocketTransport } from "./ws-transport.ts";

/** Close codes that may not be sent in a Close frame (RFC 6455 §7.4.1), so `ws.close()` refuses them. */
const RESERVED_CLOSE_CODES = new Set([1004, 1005, 1006, 1015]);

/** A store:true response copied between sessions: its record, flattened history and output. */
interface ExportedResponse {
  record: ResponseRecord;
  /** history(parent) + the response's own input, oldest first. */
  input: StoredItem[];
  output: StoredItem[];
}

/** One agent session: its sockets, conversation state and turns. */
export class SessionDurableObject extends DurableObject<Env> {
  private readonly config: Config;
  private readonly store: ConversationStore;
  private readonly connections = new ConnectionRegistry();
  private readonly live: LiveRegistry;
  private readonly ws: WebSocketTransport;
  private readonly http: HttpTransport;
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
    // No HTTP request survives a restart, so no store:false state of one may either.
    for (const scope of this.store.connectionsWithScopedState()) {
      if (scopeKind(scope) === "http") this.store.deleteConnectionScoped(scope);
    }
    this.live = new LiveRegistry(this.config.abandonGraceMs);
    const router = new UpstreamRouter(this.config.routes, (route) => createAdapter(route, this.config));
    const window = new ContextWindow(this.store);
    const pipeline = createTurnPipeline({
      routeChain: (model) => router.upstreamFor(model),
      window,
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
      importRemote: (id, tenant) => this.importRemote(id, tenant),
    });
    const shared = { engine, store: this.store, live: this.live, now: Date.now };
    this.ws = new WebSocketTransport({
      ...shared,
      maxConnectionMs: this.config.maxConnectionMs,
      redactor: this.config.redactor,
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
      () => {
        const { 0: client, 1: server } = new WebSocketPair();
        const connId = newScopeId("socket");
        this.ctx.acceptWebSocket(server, [connId]);
        this.connections.add(server, { connId, tenant, sessionId, openedAt: Date.now() });
        return new Response(null, { status: 101, webSocket: client });
      },
    );
  }

  /** RPC, `POST /v1/responses` (validated by the Worker): runs a turn. */
  createResponse(tenant: string, request: CreateRequest): Promise<Response> {
    const parent = request.previous_response_id;
    return this.serve(
      tenant,
      "claim",
      // Routed here by another tenant's previous_response_id: not found, as any foreign id.
      () =>
        parent ? previousResponseNotFound(parent) : invalidRequest("This session belongs to another tenant."),
      () => this.http.create(request, tenant),
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
    this.ws.onMessage(conn, message, (run) => this.ctx.waitUntil(run));
  }

  /** Hibernation handler: the client closed; its store:false state goes with it. */
  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.release(ws);
    try {
      ws.close(RESERVED_CLOSE_CODES.has(code) ? 1000 : code, reason.slice(0, 120));
    } catch {
      // already closed (the runtime auto-replies to Close frames)
    }
  }

  /** Hibernation handler: the socket failed; treated as a close. */
  override async webSocketError(ws: WebSocket): Promise<void> {
    this.release(ws);
  }

  /**
   * Alarm: closes sockets past the connection lifetime with `websocket_connection_limit_reached`,
   * drops store:false state whose socket vanished without a close event, expires store:true
   * responses past the retention period, and re-arms itself for the next deadline.
   */
  override async alarm(): Promise<void> {
    this.alarmAt = null; // it fired: none is set until `scheduleAlarm` below
    for (const ws of this.ctx.getWebSockets()) {
      const conn = this.connections.get(ws);
      if (conn && this.ws.expired(conn, true)) this.ws.closeForLifetime(conn);
    }
    const live = new Set(
      this.ctx
        .getWebSockets()
        .filter((ws) => ws.readyState === WebSocket.OPEN)
        .map((ws) => attachmentOf(ws)?.connId),
    );
    for (const connId of this.store.connectionsWithScopedState()) {
      // HTTP scopes are deleted by their request; only sockets can vanish without notice.
      if (scopeKind(connId) === "socket" && !live.has(connId)) {
        this.store.deleteConnectionScoped(connId);
      }
    }
    this.store.expireBefore(Date.now() - this.config.retentionMs);
    await this.scheduleAlarm();
  }

  /**
   * RPC: exports a store:true response of `tenant` for another session of the same tenant.
   * @returns the `ExportedResponse` as JSON text (RPC's structural types recurse too deeply on
   *   JSON values), or null when the response is unknown, not stored, running, expired or another
   *   tenant's.
   */
  async exportResponse(id: string, tenant: string): Promise<string | null> {
    if (!this.admits(tenant, "read")) return null;
    const record = this.store.get(id);
    if (!record?.store || record.createdAt < Date.now() - this.config.retentionMs) return null;
    if (record.status === "in_progress" || record.status === "queued") return null;
    const history = record.parentId ? this.store.history(record.parentId) : [];
    const exported: ExportedResponse = {
      record,
      input: [...history, ...this.store.items(id, "input")],
      output: this.store.items(id, "output"),
    };
    return JSON.stringify(exported);
  }

  /** Imports a response from the session Durable Object that owns it (see `exportResponse`). */
  private async importRemote(id: string, tenant: string): Promise<boolean> {
    const owner = responseOwner(id);
    if (!owner || owner === this.ctx.id.toString()) return false;
    let exported: ExportedResponse | null;
    try {
      const stub = this.env.SESSIONS.get(this.env.SESSIONS.idFromString(owner));
      const text: string | null = await stub.exportResponse(id, tenant);
      exported = text === null ? null : (JSON.parse(text) as ExportedResponse);
    } catch {
      return false; // not an id of this namespace, or the owner is unreachable: treat as not found
    }
    if (!exported || this.store.get(id)) return this.store.get(id) !== null;
    const { record, input, output } = exported;
    this.store.create({ ...record, parentId: null, connId: null, status: "in_progress" }, input);
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
    const connId = conn?.attachment.connId ?? attachmentOf(ws)?.connId;
    if (connId) this.store.deleteConnectionScoped(connId);
  }

  /** Arms the alarm for the earliest deadline: a connection lifetime or a retention expiry. */
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
    if (earliest === Number.POSITIVE_INFINITY) return;
    if (this.alarmAt === undefined) this.alarmAt = await this.ctx.storage.getAlarm();
    if (this.alarmAt === null || this.alarmAt > earliest) {
      this.alarmAt = earliest; // before the await, so a concurrent request does not arm a later one
      await this.ctx.storage.setAlarm(earliest);
    }
  }
}
