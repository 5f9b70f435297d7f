/**
 * Headers the Worker sets on the one request it forwards to a session Durable Object's `fetch`:
 * the WebSocket upgrade (an upgrade must arrive as a request; every other route is an RPC call
 * with typed arguments). The Worker strips any client-sent copies first, so the Durable Object
 * can trust them.
 */

/** The authenticated tenant id. */
export const TENANT_HEADER = "x-deltagate-tenant";
/** The session id chosen by the Worker (client header, query, or random). */
export const SESSION_HEADER = "x-deltagate-session";
