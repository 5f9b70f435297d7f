/**
 * The session Durable Object: one instance per (tenant, session). It owns the session's client
 * WebSockets (hibernation API: `ctx.acceptWebSocket`, never `ws.accept()`), its conversation
 * state in SQLite (responses, and the Conversations API's conversations its ids name:
 * conversations-http.ts), and its one alarm. It is entry points only: its modules are built in
 * session-parts.ts (storage, engine, pipeline, transports, visibility, transfer, scopes), and its
 * runtime handlers (wake, frame, close, alarm) iterate the lifecycle parts (lifecycle.ts) without
 * naming one; it contains none of their logic — deadlines (each part's), warm-on-connect
 * (warm-on-connect.ts) and failure logs (failure-log.ts) included. HTTP reaches it through one
 * RPC method per route of the Worker's route table.
 * Every entry point (the socket upgrade, each RPC method) passes the one tenant check (`admits`,
 * src/store/session-meta.ts); every handler the runtime calls without a caller (hibernation
 * handlers, the alarm) is guarded and logs its failures with the session's and responses' ids.
 * Invariants: store:false state lives as long as the socket (or HTTP request) that created it
 * (in SQLite, so it survives hibernation of a live socket), plus, for a socket, the grace window
 * its client asked for (src/http/client-options.ts) after it closed or was found gone; no response stays
 * `in_progress` across a restart; the session belongs to one tenant forever.
 * Source: https://developers.cloudflare.com/durable-objects/best-practices/websockets/
 */
import { DurableObject } from "cloudflare:workers";
import type { Config } from "../config/config.ts";
import type { CompactRequest, InputTokensRequest } from "../protocol/compact-request.ts";
import type { CreateConversationRequest } from "../protocol/conversation-requests.ts";
import type { CreateRequest } from "../protocol/create-request.ts";
import { asApiError, errorEvent, errorResponse } from "../protocol/error-rendering.ts";
import {
  ApiError,
  conversationNotFound,
  internalError,
  invalidRequest,
  responseNotFound,
} from "../protocol/errors.ts";
import { admits, foreignTenantError } from "../store/session-meta.ts";
import type { TenancyEnv } from "../tenancy/tenancy-env.ts";
import { whenSettled } from "./admission.ts";
import { AlarmClock } from "./alarm-deadline.ts";
import { attachmentOf, type Connection, openAttachments } from "./connection.ts";
import type { ConversationCall } from "./conversations-http.ts";
import { type FailureIds, failureLabel, guarded, rethrow } from "./failure-log.ts";
import { refusedAsFlood } from "./flood-screen.ts";
import type { CreateOptions, InputItemsPage, RetrieveOptions, UnaryOptions } from "./http-transport.ts";
import { bindingOf, SESSION_HEADER, TENANT_HEADER } from "./internal-headers.ts";
import { composeSession, type SessionParts } from "./session-parts.ts";
import { acceptClientSocket } from "./socket-accept.ts";

/** Close codes that may not be sent in a Close frame (RFC 6455 §7.4.1), so `ws.close()` refuses them. */
const RESERVED_CLOSE_CODES = new Set([1004, 1005, 1006, 1015]);

/**
 * The environment of the Worker and of each session: `Env`, the control plane's namespaces
 * (src/tenancy/tenancy-env.ts) and the sessions' own namespace.
 */
export interface SessionEnv extends TenancyEnv {
  /** Durable Object namespace binding: one instance per (tenant, session). */
  SESSIONS: DurableObjectNamespace<SessionDurableObject>;
}

/** One agent session: its sockets, conversation state and turns. */
export class SessionDurableObject extends DurableObject<SessionEnv> {
  private readonly parts: SessionParts;
  private readonly config: Config;
  private readonly alarmClock: AlarmClock;

  /**
   * Runs on every wake: builds the session's modules (session-parts.ts), migrates the schema and
   * wakes its lifecycle parts (the responses an earlier instance left running are ended, failed
   * with the output their event log shows was sent, src/engine/recovery.ts; the store:false
   * scopes no restart keeps are settled).
   */
  constructor(ctx: DurableObjectState, env: SessionEnv) {
    super(ctx, env);
    const open = this.openScopes();
    this.parts = composeSession(ctx, env, {
      openScopes: open,
      sockets: () => ctx.getWebSockets(),
      scheduleAlarm: () => this.scheduleAlarm(),
      exportFrom: (owner, id, tenant, importer) =>
        env.SESSIONS.get(env.SESSIONS.idFromString(owner)).exportResponse(id, tenant, importer),
      // The owner of a conversation a socket's create names (conversation-relay.ts): the RPC
      // method the Worker calls for `POST /v1/responses` with `conversation`.
      relayCreate: (owner, tenant, request, options) => {
        let id: DurableObjectId;
        try {
          id = env.SESSIONS.idFromString(owner);
        } catch {
          return null; // well-formed but not an id of this namespace
        }
        // Typed as unknown: the stub's own RPC type of this class is too deep for the compiler here.
        const answer: Promise<unknown> = env.SESSIONS.get(id).createResponse(tenant, request, options);
        return answer.then(rpcResponse);
      },
    });
    this.config = this.parts.config;
    this.alarmClock = new AlarmClock(ctx.storage);
    this.parts.lifecycle.wake(open);
  }

  /**
   * The WebSocket upgrade of `GET /v1/responses`, forwarded by the Worker (authenticated; the
   * tenant and session travel in the upgrade headers, internal-headers.ts). Everything else
   * reaches the session through the RPC methods below.
   */
  override async fetch(request: Request): Promise<Response> {
    const tenant = request.headers.get(TENANT_HEADER);
    const sessionId = request.headers.get(SESSION_HEADER);
    const binding = bindingOf(request.headers);
    if (!tenant || !sessionId || request.headers.get("upgrade")?.toLowerCase() !== "websocket") {
      return errorResponse(invalidRequest("Missing session routing headers."), this.config.redactor);
    }
    const denied = () => invalidRequest("This session cannot be opened with this key.");
    return this.serve(tenant, "claim", denied, [], () =>
      acceptClientSocket(this.ctx, this.parts, this.config, request, {
        tenant,
        sessionId,
        binding,
      }),
    );
  }

  /**
   * RPC, `POST /v1/responses` (validated by the Worker), or a socket's create of a conversation
   * this session holds, relayed by the socket's session (conversation-relay.ts): admitted
   * (admission.ts), then runs a turn.
   */
  createResponse(tenant: string, request: CreateRequest, options: CreateOptions = {}): Promise<Response> {
    const parent = request.previous_response_id;
    // Another tenant's conversation (its id names this object) is not found, as on its routes.
    const conversation = typeof request.conversation === "string" ? request.conversation : null;
    const denied = () =>
      conversation ? conversationNotFound(conversation, "conversation") : foreignTenantError(parent);
    return this.serve(tenant, "claim", denied, [parent], () =>
      this.parts.http.create(request, tenant, options, () =>
        // A relayed `generate: false` warm-up generates nothing (its reservation, as over WebSocket).
        this.admit("turn", request, options, request.generate === false ? 0 : request.max_output_tokens),
      ),
    );
  }

  /**
   * RPC, `POST /v1/responses/compact` (validated by the Worker): admitted as a turn
   * (admission.ts), then compacts a context (src/engine/compact-endpoints.ts).
   */
  compactResponse(tenant: string, request: CompactRequest, options: UnaryOptions = {}): Promise<Response> {
    const parent = request.previous_response_id;
    const denied = () => foreignTenantError(parent);
    return this.serve(tenant, "claim", denied, [parent], () =>
      whenSettled(this.admit("turn", request, options), (admitted) => {
        if (admitted instanceof ApiError) throw admitted;
        if (admitted.model !== null) request.model = admitted.model;
        return this.parts.compaction.compact(request, tenant, admitted);
      }),
    );
  }

  /**
   * RPC, `POST /v1/responses/input_tokens` (validated by the Worker): admitted as a count
   * (admission.ts: binding, allowed models), then counts a context's tokens.
   */
  countInputTokens(
    tenant: string,
    request: InputTokensRequest,
    options: UnaryOptions = {},
  ): Promise<Response> {
    const parent = request.previous_response_id;
    const conversation = typeof request.conversation === "string" ? request.conversation : null;
    const denied = () =>
      conversation ? conversationNotFound(conversation, "conversation") : foreignTenantError(parent);
    return this.serve(tenant, "claim", denied, [parent], () =>
      whenSettled(this.admit("count", request, options), (admitted) => {
        if (admitted instanceof ApiError) throw admitted;
        if (admitted.model !== null) request.model = admitted.model;
        return this.parts.compaction.inputTokens(request, tenant, admitted.keyId);
      }),
    );
  }

  /**
   * The one admission (admission.ts) of an HTTP call the Worker sent with `options`.
   * @param maxOutputTokens a create's output bound (its `tokens_per_day` reservation).
   */
  private admit(
    kind: "turn" | "count",
    request: { model?: string | null | undefined; previous_response_id?: string | null | undefined },
    options: UnaryOptions & Pick<CreateOptions, "relayedKeyId">,
    maxOutputTokens?: number | null,
  ) {
    const { bytes = 0, tenant } = options.tenancy ?? {};
    return this.parts.admission.admit({
      kind,
      model: request.model ?? null,
      previousResponseId: request.previous_response_id,
      bytes,
      maxOutputTokens,
      binding: options.binding ?? null,
      tenant,
      keyId: options.relayedKeyId,
    });
  }

  /** RPC, `GET /v1/responses/{id}` (`stream=true&starting_after=N` resumes its events). */
  retrieveResponse(tenant: string, id: string, options: RetrieveOptions): Promise<Response> {
    return this.serveById(tenant, id, () => this.parts.http.retrieve(id, options));
  }

  /** RPC, `DELETE /v1/responses/{id}`. */
  deleteResponse(tenant: string, id: string): Promise<Response> {
    return this.serveById(tenant, id, () => this.parts.http.remove(id));
  }

  /** RPC, `GET /v1/responses/{id}/input_items`. */
  listInputItems(tenant: string, id: string, page: InputItemsPage): Promise<Response> {
    return this.serveById(tenant, id, () => this.parts.http.inputItems(id, page));
  }

  /** RPC, `POST /v1/responses/{id}/cancel`. */
  cancelResponse(tenant: string, id: string): Promise<Response> {
    return this.serveById(tenant, id, () => this.parts.http.cancel(id));
  }

  /** RPC, `POST /v1/conversations` (validated by the Worker): a conversation held by this session. */
  createConversation(tenant: string, body: CreateConversationRequest): Promise<Response> {
    const denied = () => invalidRequest("This session cannot be opened with this key.");
    return this.serve(tenant, "claim", denied, [], () => this.parts.conversations.create(body));
  }

  /**
   * RPC, every route of `/v1/conversations/{id}` (validated by the Worker): `call` runs on this
   * session's conversations once the tenant check passed — another tenant's id is not found.
   */
  conversationCall(tenant: string, id: string, call: ConversationCall): Promise<Response> {
    const http = this.parts.conversations;
    return this.serve(
      tenant,
      "read",
      () => conversationNotFound(id),
      [],
      () => {
        switch (call.route) {
          case "retrieve":
            return http.retrieve(id);
          case "update":
            return http.update(id, call.body);
          case "delete":
            return http.remove(id);
          case "add_items":
            return http.addItems(id, call.body, call.include);
          case "list_items":
            return http.listItems(id, call.query, call.include);
          case "retrieve_item":
            return http.retrieveItem(id, call.itemId, call.include);
          case "delete_item":
            return http.removeItem(id, call.itemId);
        }
      },
    );
  }

  /**
   * RPC: exports a response of `tenant` for the scope `importer` of another session of the same
   * tenant (transfer.ts), or null when it is unknown, not visible to that scope, running, expired
   * or another tenant's.
   */
  async exportResponse(id: string, tenant: string, importer: string): Promise<string | null> {
    if (!admits(this.ctx.storage.sql, tenant, "read")) return null;
    return this.parts.transfer.exportJson(id, importer);
  }

  /** Hibernation handler: one client frame. A failure of the session itself answers `server_error`. */
  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const conn = this.parts.connections.get(ws);
    if (!conn || refusedAsFlood(conn, message, this.config.redactor)) return; // first: flood-screen.ts
    const answer = () => {
      try {
        ws.send(JSON.stringify(errorEvent(internalError(), this.config.redactor)));
      } catch {
        // the socket is gone: nobody to answer
      }
    };
    await this.guard("webSocketMessage", conn, answer, () => {
      this.parts.lifecycle.frame(conn); // e.g. a late alarm must not stretch a store:false window
      this.parts.ws.onMessage(conn, message, (run) => this.ctx.waitUntil(run));
    });
  }

  /** Hibernation handler: the client closed; its store:false state starts its grace window. */
  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    await this.guard("webSocketClose", this.parts.connections.get(ws), null, async () => {
      this.release(ws);
      try {
        ws.close(RESERVED_CLOSE_CODES.has(code) ? 1000 : code, reason.slice(0, 120));
      } catch {
        // already closed (the runtime auto-replies to Close frames)
      }
      await this.scheduleAlarm(); // the end of its grace window
    });
  }

  /** Hibernation handler: the socket failed; treated as a close. */
  override async webSocketError(ws: WebSocket): Promise<void> {
    await this.guard("webSocketError", this.parts.connections.get(ws), null, async () => {
      this.release(ws);
      await this.scheduleAlarm();
    });
  }

  /**
   * Alarm: runs every lifecycle part's alarm hook in order (session-parts.ts lists them: sockets
   * past their lifetime closed, vanished sockets announced as gone, store:false windows purged,
   * retention, the usage outbox flushed), then re-arms itself for the parts' next deadline. A
   * failure is logged and thrown again, so the runtime retries the alarm.
   */
  override async alarm(): Promise<void> {
    this.alarmClock.fired(); // none is set until `scheduleAlarm` below
    await this.guard("alarm", null, rethrow, async () => {
      await this.parts.lifecycle.alarm(Date.now(), this.openScopes());
      await this.scheduleAlarm();
    });
  }

  /** Runs a handler the runtime called (failure-log.ts `guarded`), logging `conn`'s ids on failure. */
  private guard(
    handler: string,
    conn: Connection | null,
    onFailure: ((cause: unknown) => void) | null,
    run: () => unknown,
  ): Promise<void> {
    const ids = () => this.idsOf(conn);
    return guarded(`${handler} failed`, ids, this.config.redactor, run, onFailure ?? undefined);
  }

  /**
   * Runs one request of `tenant`: the one tenant check (session-meta.ts `admits`; `denied` is the
   * error when it fails), the handler, errors rendered as OpenAI's envelope (an unexpected one
   * logged with the session's id and `responseIds`), then the alarm re-armed for new deadlines.
   */
  private async serve(
    tenant: string,
    access: "claim" | "read",
    denied: () => ApiError,
    responseIds: readonly (string | null | undefined)[],
    handler: () => Response | Promise<Response>,
  ): Promise<Response> {
    try {
      if (!admits(this.ctx.storage.sql, tenant, access)) throw denied();
      return await handler();
    } catch (cause) {
      const { redactor } = this.config;
      const where = failureLabel("session request failed", { ...this.idsOf(null), responseIds }, redactor);
      return errorResponse(asApiError(cause, where, redactor), redactor);
    } finally {
      await this.scheduleAlarm();
    }
  }

  /** `serve` for a route on one response id: another tenant's id is simply not found. */
  private serveById(tenant: string, id: string, handler: () => Response | Promise<Response>) {
    return this.serve(tenant, "read", () => responseNotFound(id), [id], handler);
  }

  /** The ids a failure log line names: the session, and a socket's name and live responses. */
  private idsOf(conn: Connection | null): FailureIds {
    const session = this.ctx.id.toString();
    if (!conn) return { session };
    const responseIds = this.parts.live.idsServing(conn.sinks.values());
    return { session, sessionName: conn.attachment.sessionId, responseIds };
  }

  /** A socket closed or failed: every lifecycle part hears it is gone. */
  private release(ws: WebSocket): void {
    const conn = this.parts.connections.remove(ws);
    const attachment = conn?.attachment ?? attachmentOf(ws);
    this.parts.lifecycle.socketGone({ connId: attachment?.connId ?? null, attachment, conn });
  }

  /** The scope ids of this session's open sockets. */
  private openScopes(): Set<string> {
    return new Set(openAttachments(this.ctx.getWebSockets()).map((a) => a.connId));
  }

  /** Arms the one alarm for the earliest deadline of the lifecycle parts (alarm-deadline.ts). */
  private async scheduleAlarm(): Promise<void> {
    await this.alarmClock.arm(this.parts.lifecycle.nextDeadline());
  }
}

/** The owner's answer to a relayed create: a `Response` (its body streamed over RPC), or a 500. */
function rpcResponse(answer: unknown): Response {
  if (answer instanceof Response) return answer;
  throw internalError();
}
