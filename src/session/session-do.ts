/**
 * The session Durable Object: one instance per (tenant, session). It owns the session's client
 * WebSockets (hibernation API: `ctx.acceptWebSocket`, never `ws.accept()`), its conversation
 * state in SQLite, and the alarm that enforces the connection lifetime. It composes modules and
 * contains none of their logic: storage (`ConversationStore`), turns (`TurnEngine`), frames
 * (`WebSocketTransport`), sockets (`ConnectionRegistry`).
 * Invariants: store:false state lives only as long as the socket that created it (it is kept in
 * SQLite so it survives hibernation, and deleted when the socket closes or is found gone);
 * no response stays `in_progress` across a restart.
 * Source: https://developers.cloudflare.com/durable-objects/best-practices/websockets/
 */
import { DurableObject } from "cloudflare:workers";
import { parseConfig } from "../config/config.ts";
import type { Env } from "../config/env.ts";
import { TurnEngine } from "../engine/turn-engine.ts";
import { ApiError, invalidRequest } from "../protocol/errors.ts";
import { ConversationStore } from "../store/conversation-store.ts";
import { UpstreamRouter } from "../upstream/router.ts";
import { newConnectionId } from "../util/ids.ts";
import { attachmentOf, ConnectionRegistry } from "./connection.ts";
import { SESSION_HEADER, TENANT_HEADER } from "./internal-headers.ts";
import { WebSocketTransport } from "./ws-transport.ts";

/** Close codes the runtime refuses in `ws.close()` (platform brief §1 "Closing sockets"). */
const RESERVED_CLOSE_CODES = new Set([1004, 1005, 1006, 1015]);

/** One agent session: its sockets, conversation state and turns. */
export class SessionDurableObject extends DurableObject<Env> {
  private readonly store: ConversationStore;
  private readonly transport: WebSocketTransport;
  private readonly connections = new ConnectionRegistry();
  private readonly maxConnectionMs: number;

  /** Runs on every wake: migrates the schema and fails responses an earlier instance left running. */
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const config = parseConfig(env);
    this.maxConnectionMs = config.maxConnectionMs;
    this.store = new ConversationStore(ctx.storage);
    this.store.failInterrupted(Date.now());
    const router = new UpstreamRouter(config.routes);
    const engine = new TurnEngine({
      store: this.store,
      upstreamFor: (model) => router.upstreamFor(model),
      ownerId: ctx.id.toString(),
      now: Date.now,
    });
    this.transport = new WebSocketTransport(engine, config.maxConnectionMs, Date.now);
  }

  /**
   * Accepts a WebSocket upgrade forwarded by the Worker (which has authenticated it and set the
   * internal tenant/session headers).
   * @returns 101 with the client end of the socket, or a 4xx JSON error.
   */
  override async fetch(request: Request): Promise<Response> {
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") {
      return errorResponse(
        new ApiError(426, {
          type: "invalid_request_error",
          code: "upgrade_required",
          message: "Expected a WebSocket upgrade.",
          param: null,
        }),
      );
    }
    const tenant = request.headers.get(TENANT_HEADER);
    const sessionId = request.headers.get(SESSION_HEADER);
    if (!tenant || !sessionId) return errorResponse(invalidRequest("Missing session routing headers."));
    const { 0: client, 1: server } = new WebSocketPair();
    const connId = newConnectionId();
    this.ctx.acceptWebSocket(server, [connId]);
    this.connections.add(server, { connId, tenant, sessionId, openedAt: Date.now() });
    await this.scheduleAlarm();
    return new Response(null, { status: 101, webSocket: client });
  }

  /** Hibernation handler: one client frame. */
  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const conn = this.connections.get(ws);
    if (!conn) return;
    this.transport.onMessage(conn, message, (run) => this.ctx.waitUntil(run));
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
   * drops store:false state whose socket vanished without a close event, and re-arms itself.
   */
  override async alarm(): Promise<void> {
    for (const ws of this.ctx.getWebSockets()) {
      const conn = this.connections.get(ws);
      if (conn && this.transport.expired(conn)) this.transport.closeForLifetime(conn);
    }
    const live = new Set(
      this.ctx
        .getWebSockets()
        .filter((ws) => ws.readyState === WebSocket.OPEN)
        .map((ws) => attachmentOf(ws)?.connId),
    );
    for (const connId of this.store.connectionsWithScopedState()) {
      if (!live.has(connId)) this.store.deleteConnectionScoped(connId);
    }
    await this.scheduleAlarm();
  }

  private release(ws: WebSocket): void {
    const conn = this.connections.remove(ws);
    const connId = conn?.attachment.connId ?? attachmentOf(ws)?.connId;
    if (connId) this.store.deleteConnectionScoped(connId);
  }

  /** Arms the alarm for the earliest connection-lifetime deadline (no alarm when no sockets). */
  private async scheduleAlarm(): Promise<void> {
    let earliest = Number.POSITIVE_INFINITY;
    for (const ws of this.ctx.getWebSockets()) {
      const openedAt = attachmentOf(ws)?.openedAt;
      if (openedAt !== undefined && ws.readyState === WebSocket.OPEN) {
        earliest = Math.min(earliest, openedAt + this.maxConnectionMs);
      }
    }
    if (earliest === Number.POSITIVE_INFINITY) return;
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > earliest) await this.ctx.storage.setAlarm(earliest);
  }
}

function errorResponse(error: ApiError): Response {
  return Response.json({ error: error.toBody() }, { status: error.status });
}
