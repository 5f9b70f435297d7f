/**
 * Client secrets: short-lived credentials a tenant's backend mints (`POST /v1/client_secrets`)
 * for a browser or a phone app, shaped like OpenAI's Realtime client secrets
 * (https://platform.openai.com/docs/api-reference/realtime-sessions/create-realtime-client-secret).
 * Owns the secret's format, its signature and its claims (`ClientSecretClaims`).
 * Format: `ek_<payload>.<signature>`, both base64url without padding (token characters only, so the
 * secret fits a `Sec-WebSocket-Protocol` entry and a query parameter unescaped); `<payload>` is
 * compact JSON of the claims, `<signature>` HMAC-SHA256 (src/crypto/signing.ts) of `ek_<payload>`
 * under the signing key's UTF-8 bytes as the key (`Config.clientSecrets.signingKey`: derived from
 * `DELTAGATE_SECRET`, or the deprecated `CLIENT_SECRET_SIGNING_KEY` while set; src/config/).
 * Invariants: verifying a secret needs no storage and no network (one HMAC in the isolate); a
 * secret whose signature does not check is never read further; the claims are readable by whoever
 * holds the secret (like a JWT) but cannot be changed without the key; rotating the key revokes
 * every secret; the secret itself is never stored, logged or echoed (the redactor knows its
 * shape, src/secrets/redactor.ts).
 */
import { fromBase64Url, fromUtf8, toBase64Url, utf8 } from "../crypto/encoding.ts";
import { importKey, perSecret } from "../crypto/keys.ts";
import { sign, verify } from "../crypto/signing.ts";

/** What every client secret starts with (OpenAI's prefix for ephemeral keys; its SDKs treat `ek_` keys as browser-safe). */
export const CLIENT_SECRET_PREFIX = "ek_";
/** Lifetime bounds in seconds, as OpenAI's `expires_after.seconds`: 10 s to 2 hours, 10 minutes by default. */
export const MIN_TTL_SECONDS = 10;
export const MAX_TTL_SECONDS = 7200;
export const DEFAULT_TTL_SECONDS = 600;
/** Shortest signing key accepted (characters): 32, the size of the HMAC-SHA256 output. */
export const MIN_SIGNING_KEY_CHARS = 32;
/** Longest secret read (characters): bounds the work an attacker can ask of the verifier. */
const MAX_SECRET_CHARS = 8192;
/** Payload format version. */
const VERSION = 1;

/** What a secret allows: exactly one session, and optionally fewer models and smaller requests. */
export interface SecretBinding {
  /** The one session (Durable Object) the secret opens, of its tenant. */
  sessionId: string;
  /** Models its turns may name; null: every model. */
  models: readonly string[] | null;
  /** Responses it may create, over every socket and HTTP request together; null: no limit. */
  maxTurns: number | null;
  /** Largest `response.create` frame / `POST /v1/responses` body, in UTF-8 bytes; null: the global limit. */
  maxRequestBytes: number | null;
}

/** Everything a verified secret says. */
export interface ClientSecretClaims extends SecretBinding {
  tenant: string;
  /** Random id of this secret (its turn counter is kept under it; it is not the secret). */
  id: string;
  /** Unix seconds after which it is refused. */
  expiresAt: number;
}

/** Why a presented secret is refused. */
export type SecretFailure = "malformed" | "invalid" | "expired";

/** The result of `verifyClientSecret`. */
export type Verified = { ok: true; claims: ClientSecretClaims } | { ok: false; failure: SecretFailure };

/** The compact JSON payload (short names keep the secret short in a URL or a header). */
interface Payload {
  v: number;
  t: string;
  s: string;
  i: string;
  x: number;
  m?: string[];
  n?: number;
  b?: number;
}

/** The HMAC key of a signing key, imported once per isolate (rotation changes the string). */
const hmacKey = perSecret((raw) => importKey(raw, "hmac"), 2);

/** True when `value` has the shape of a client secret (it may still be forged or expired). */
export function isClientSecret(value: string): boolean {
  return value.startsWith(CLIENT_SECRET_PREFIX);
}

/** A new client secret for `claims`, signed with `signingKey`. */
export async function mintClientSecret(signingKey: string, claims: ClientSecretClaims): Promise<string> {
  const payload: Payload = {
    v: VERSION,
    t: claims.tenant,
    s: claims.sessionId,
    i: claims.id,
    x: claims.expiresAt,
  };
  if (claims.models) payload.m = [...claims.models];
  if (claims.maxTurns !== null) payload.n = claims.maxTurns;
  if (claims.maxRequestBytes !== null) payload.b = claims.maxRequestBytes;
  const signed = `${CLIENT_SECRET_PREFIX}${toBase64Url(utf8(JSON.stringify(payload)))}`;
  return `${signed}.${toBase64Url(await sign(await hmacKey(signingKey), signed))}`;
}

/** The claims of a payload whose signature checked, or null when its fields are not as minted. */
function claimsOf(payload: unknown): ClientSecretClaims | null {
  if (typeof payload !== "object" || payload === null) return null;
  const p = payload as Partial<Payload>;
  if (p.v !== VERSION || typeof p.t !== "string" || typeof p.s !== "string") return null;
  if (typeof p.i !== "string" || typeof p.x !== "number") return null;
  const models = Array.isArray(p.m) && p.m.every((m) => typeof m === "string") ? p.m : null;
  return {
    tenant: p.t,
    sessionId: p.s,
    id: p.i,
    expiresAt: p.x,
    models,
    maxTurns: typeof p.n === "number" ? p.n : null,
    maxRequestBytes: typeof p.b === "number" ? p.b : null,
  };
}

/**
 * Checks a presented secret: its shape, then its signature (constant time, WebCrypto), then its
 * expiry against `nowSeconds`.
 * @returns its claims, or why it is refused: `malformed` (not a secret's shape), `invalid` (the
 *   signature does not check: forged, tampered with, or signed with a key since rotated),
 *   `expired`.
 */
export async function verifyClientSecret(
  value: string,
  signingKey: string,
  nowSeconds: number,
): Promise<Verified> {
  if (!isClientSecret(value) || value.length > MAX_SECRET_CHARS) return { ok: false, failure: "malformed" };
  const dot = value.lastIndexOf(".");
  const signature = dot > 0 ? fromBase64Url(value.slice(dot + 1)) : null;
  const payloadBytes = dot > 0 ? fromBase64Url(value.slice(CLIENT_SECRET_PREFIX.length, dot)) : null;
  if (signature?.length !== 32 || !payloadBytes) return { ok: false, failure: "malformed" };
  if (!(await verify(await hmacKey(signingKey), signature, value.slice(0, dot)))) {
    return { ok: false, failure: "invalid" };
  }
  let claims: ClientSecretClaims | null;
  try {
    claims = claimsOf(JSON.parse(fromUtf8(payloadBytes)));
  } catch {
    claims = null;
  }
  // Signed by this key yet unreadable: only a key shared with another format could do that.
  if (!claims) return { ok: false, failure: "invalid" };
  if (nowSeconds >= claims.expiresAt) return { ok: false, failure: "expired" };
  return { ok: true, claims };
}
