/**
 * The store:false scopes of a session Durable Object: who may continue a `store: false` response.
 * Owns the scope id formats and their kinds:
 * - `conn_<random>`: one client WebSocket (the scope lives as long as the socket; its attachment
 *   carries it across hibernation); `conn_<random>.g<ms>` when the socket has a store:false grace
 *   window (client-options.ts): the window travels with the id, so every place that holds a scope
 *   id (its responses' rows, `released_scopes`) knows it, even after the socket is gone;
 * - `http_<random>`: one HTTP request (the scope lives only for that request).
 * Invariant: a scope id is unguessable and names exactly one socket or request; the engine treats
 * it as opaque (src/engine/turn-engine.ts `TurnScope.connId`).
 * Who may continue a store:false response (`mayContinue`): its own scope always; when its socket
 * has a grace window (`scopeGraceMs` > 0) also any other WebSocket of the same tenant (the session
 * Durable Object has checked the tenant; a reconnecting client must not lose its chain, even
 * before the old socket's close was noticed). Never an HTTP request: OpenAI's store:false is
 * never visible over HTTP. With no window (the default) only the creating socket, as OpenAI.
 * Source: https://developers.openai.com/api/docs/guides/websocket-mode (store:false state is
 *   connection-local).
 */
import { randomToken } from "../util/ids.ts";

/** Where a store:false response may be continued from. */
export type ScopeKind = "socket" | "http";

const PREFIX: Record<ScopeKind, string> = { socket: "conn_", http: "http_" };

/** The suffix of a socket scope id with a grace window (base64url never contains a dot). */
const GRACE_SUFFIX = /\.g(\d{1,10})$/;

/**
 * A new scope id of `kind`.
 * @param graceMs the socket's store:false grace window (client-options.ts); ignored for HTTP.
 */
export function newScopeId(kind: ScopeKind, graceMs = 0): string {
  const id = `${PREFIX[kind]}${randomToken(12)}`;
  return kind === "socket" && graceMs > 0 ? `${id}.g${graceMs}` : id;
}

/** The store:false grace window of a scope, in ms: 0 for an HTTP scope or a socket without one. */
export function scopeGraceMs(id: string): number {
  if (scopeKind(id) !== "socket") return 0;
  const match = GRACE_SUFFIX.exec(id);
  return match ? Number(match[1]) : 0;
}

/** The kind of a scope id, or null when it is neither. */
export function scopeKind(id: string): ScopeKind | null {
  if (id.startsWith(PREFIX.socket)) return "socket";
  if (id.startsWith(PREFIX.http)) return "http";
  return null;
}

/**
 * Whether scope `caller` may continue a store:false response owned by scope `owner` (both of the
 * same session, hence of the same tenant).
 * @param graceMs the owner's grace window (`scopeGraceMs(owner)`): 0 keeps store:false state to
 *   its own socket.
 */
export function mayContinue(owner: string, caller: string, graceMs: number): boolean {
  if (owner === caller) return true;
  return sharedWithSockets(owner, graceMs) && scopeKind(caller) === "socket";
}

/** Whether every WebSocket of the tenant (not only the owner's) may continue what `owner` holds. */
export function sharedWithSockets(owner: string, graceMs: number): boolean {
  return graceMs > 0 && scopeKind(owner) === "socket";
}
