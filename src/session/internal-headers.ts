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

/**
 * On a socket opened with a client secret: its per-turn binding (`SecretTurnBinding`, JSON). The
 * Worker verified the secret; the secret itself never reaches the Durable Object.
 */
export const BINDING_HEADER = "x-deltagate-client-secret-binding";

/** What a session enforces per turn of a client secret (src/auth/secret-binding.ts, src/store/secret-turns.ts). */
export interface SecretTurnBinding {
  /** The secret's random id (not the secret): its turn counter's key. */
  id: string;
  /** Unix seconds: when its turn counter may be dropped. */
  expiresAt: number;
  models: readonly string[] | null;
  maxTurns: number | null;
  maxRequestBytes: number | null;
}

/** The binding carried by `BINDING_HEADER`, or null when there is none or it is unreadable. */
export function bindingOf(headers: Headers): SecretTurnBinding | null {
  const raw = headers.get(BINDING_HEADER);
  if (!raw) return null;
  try {
    const value = JSON.parse(raw) as Partial<SecretTurnBinding>;
    if (typeof value.id !== "string" || typeof value.expiresAt !== "number") return null;
    return {
      id: value.id,
      expiresAt: value.expiresAt,
      models: Array.isArray(value.models) ? value.models.filter((m) => typeof m === "string") : null,
      maxTurns: typeof value.maxTurns === "number" ? value.maxTurns : null,
      maxRequestBytes: typeof value.maxRequestBytes === "number" ? value.maxRequestBytes : null,
    };
  } catch {
    return null;
  }
}
