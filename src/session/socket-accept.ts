/**
 * Accepting a client WebSocket into the session: the client's opt-ins (store:false grace window,
 * keepalive, per-stage timing), the tenant's snapshot and socket lease, the socket accepted for
 * hibernation with its attachment, the upstream warmed for the model it announced.
 * Invariant: a socket is accepted with `ctx.acceptWebSocket` (never `ws.accept()`), so it
 * survives hibernation, and everything the session later needs of it is in its attachment.
 * Source: https://developers.cloudflare.com/durable-objects/best-practices/websockets/
 */
import type { Config } from "../config/config.ts";
import { clientOptions, STORE_FALSE_GRACE_HEADER } from "../http/client-options.ts";
import { timingOptIn, wantsTiming } from "../pipeline/turn-timing.ts";
import type { SecretTurnBinding } from "./internal-headers.ts";
import { newScopeId, scopeGraceMs } from "./scope.ts";
import type { SessionParts } from "./session-parts.ts";
import { modelHint, warmUpstream } from "./warm-on-connect.ts";

/** Who opens the socket (from the Worker's internal headers). */
export interface SocketOpener {
  tenant: string;
  sessionId: string;
  /** A client secret's per-turn binding, when the socket was opened with one. */
  binding: SecretTurnBinding | null;
}

/** Accepts the upgrade `request` as one of the session's sockets and answers its 101. */
export async function acceptClientSocket(
  ctx: DurableObjectState,
  parts: SessionParts,
  config: Config,
  request: Request,
  opener: SocketOpener,
): Promise<Response> {
  // The client's opt-ins (client-options.ts): its store:false grace window rides in its scope id.
  const { storeFalseGraceMs: defaultMs, storeFalseGraceMaxMs: maxMs } = config;
  const options = clientOptions(request.headers, { defaultMs, maxMs }, request.url);
  // The tenant's snapshot and socket lease (src/tenancy/); the limits' lease comes with the first create.
  const keys = await parts.tenancy.upgrading(request.headers);
  const { 0: client, 1: server } = new WebSocketPair();
  const connId = newScopeId("socket", options.storeFalseGraceMs);
  ctx.acceptWebSocket(server, [connId]);
  const timing = timingOptIn(request.headers, request.url);
  parts.connections.add(server, {
    connId,
    tenant: opener.tenant,
    sessionId: opener.sessionId,
    openedAt: Date.now(),
    ...(wantsTiming(timing) ? { timing } : {}),
    ...(opener.binding ? { binding: opener.binding } : {}),
    ...(options.keepalive ? {} : { keepalive: false }),
    ...keys,
  });
  parts.lifecycle.socketOpened(connId);
  warmUpstream(parts.warm, modelHint(request.headers));
  // What the socket got (a grace above STORE_FALSE_GRACE_MAX_MS is lowered to it).
  const headers = { [STORE_FALSE_GRACE_HEADER]: String(scopeGraceMs(connId)) };
  return new Response(null, { status: 101, webSocket: client, headers });
}
