/**
 * Headers the Worker sets on requests it forwards to a session Durable Object. The Worker strips
 * any client-sent copies first, so the Durable Object can trust them.
 */

/** The authenticated tenant id. */
export const TENANT_HEADER = "x-deltagate-tenant";
/** The session id chosen by the Worker (client header, query, or random). */
export const SESSION_HEADER = "x-deltagate-session";
