/**
 * The Standard Webhooks signature scheme, as OpenAI signs its webhooks and as the `openai` SDK's
 * `client.webhooks.unwrap()` checks them (node_modules/openai/lib/webhook-signature.js): the
 * signing secret is `whsec_` + base64 of random bytes; the signed content is
 * `{webhook-id}.{webhook-timestamp}.{body}`; `webhook-signature` is `v1,` + base64 of its
 * HMAC-SHA256 under the secret's bytes; `webhook-timestamp` is the attempt's time in unix seconds
 * (each retry signs again with its own time, so a receiver's 5-minute tolerance holds); the id is
 * the same for every attempt of one event (the receiver's idempotency key).
 * Owns the secret's format and the three headers; HMAC and base64 are src/crypto/'s.
 * Invariant: the body signed is the body sent, byte for byte.
 * Source: https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md,
 *   https://developers.openai.com/api/docs/guides/webhooks
 */
import { fromBase64, toBase64 } from "../crypto/encoding.ts";
import { importKey } from "../crypto/keys.ts";
import { sign } from "../crypto/signing.ts";

/** The prefix of a signing secret ("for easy identification", Standard Webhooks). */
export const SECRET_PREFIX = "whsec_";
/** Bytes of a secret Deltagate makes (the spec asks for 24 to 64). */
const SECRET_BYTES = 32;
const MIN_SECRET_BYTES = 24;
const MAX_SECRET_BYTES = 64;

/** A new signing secret: `whsec_` + base64 of 32 random bytes. */
export function newSigningSecret(): string {
  const bytes = new Uint8Array(SECRET_BYTES);
  crypto.getRandomValues(bytes);
  return `${SECRET_PREFIX}${toBase64(bytes)}`;
}

/** The key bytes of a signing secret, or null when `secret` is not one (prefix, base64, 24–64 bytes). */
export function secretBytes(secret: string): Uint8Array | null {
  if (!secret.startsWith(SECRET_PREFIX)) return null;
  const bytes = fromBase64(secret.slice(SECRET_PREFIX.length));
  if (!bytes || bytes.length < MIN_SECRET_BYTES || bytes.length > MAX_SECRET_BYTES) return null;
  return bytes;
}

/** The Standard Webhooks headers of one delivery attempt. */
export interface SignatureHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

/**
 * The headers that sign `body` for the attempt at `timestamp` (unix seconds).
 * @throws {Error} when `secret` is not a signing secret.
 */
export async function signatureHeaders(
  secret: string,
  id: string,
  timestamp: number,
  body: string,
): Promise<SignatureHeaders> {
  const bytes = secretBytes(secret);
  if (!bytes) throw new Error("not a whsec_ signing secret");
  const key = await importKey(bytes, "hmac");
  const mac = await sign(key, `${id}.${timestamp}.${body}`);
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": `v1,${toBase64(mac)}`,
  };
}
