/**
 * Headers the Worker sets on the one request it forwards to a session Durable Object's `fetch`:
 * the WebSocket upgrade (an upgrade must arrive as a request; every other route is an RPC call
 * with typed arguments). The Worker strips any client-sent copies first, so the Durable Object
 * can trust them. Also the one header a session sets on an RPC answer for the Worker alone.
 */

/** The authenticated tenant id. */
export const TENANT_HEADER = "x-deltagate-tenant";
/** The session id chosen by the Worker (client header, query, or random). */
export const SESSION_HEADER = "x-deltagate-session";
/**
 * On a session's answer to `createResponse`: it declined an affinity-routed request, being too
 * busy (src/worker/affinity.ts); the Worker sends the request to a fresh session. Never reaches
 * a client.
 */
export const AFFINITY_BUSY_HEADER = "x-deltagate-affinity-busy";
