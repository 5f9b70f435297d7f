/**
 * The store:false scopes of a session Durable Object: who may continue a `store: false` response.
 * Owns the scope id formats and their kinds:
 * - `conn_<random>`: one client WebSocket (the scope lives as long as the socket; its attachment
 *   carries it across hibernation);
 * - `http_<random>`: one HTTP request (the scope lives only for that request).
 * Invariant: a scope id is unguessable and names exactly one socket or request; the engine treats
 * it as opaque (src/engine/turn-engine.ts `TurnScope.connId`).
 * Source: https://developers.openai.com/api/docs/guides/websocket-mode (store:false state is
 *   connection-local).
 */
import { randomToken } from "../util/ids.ts";

/** Where a store:false response may be continued from. */
export type ScopeKind = "socket" | "http";

const PREFIX: Record<ScopeKind, string> = { socket: "conn_", http: "http_" };

/** A new scope id of `kind`. */
export function newScopeId(kind: ScopeKind): string {
  return `${PREFIX[kind]}${randomToken(12)}`;
}

/** The kind of a scope id, or null when it is neither. */
export function scopeKind(id: string): ScopeKind | null {
  if (id.startsWith(PREFIX.socket)) return "socket";
  if (id.startsWith(PREFIX.http)) return "http";
  return null;
}
