/**
 * Key material: SHA-256, keys imported from a configured secret or derived from it (HKDF-SHA-256,
 * one `info` per purpose, so no key serves two purposes), a purpose's secret text derived from a
 * root secret, and the per-isolate memo of them.
 * Invariants: a key is never extractable (WebCrypto holds it; no caller can read it back); a
 * secret's keys are derived once per isolate, and the memo holds a bounded number of secrets
 * (a rotation adds one).
 * Source: https://developers.cloudflare.com/workers/runtime-apis/web-crypto/,
 *   https://developer.mozilla.org/en-US/docs/Web/API/SubtleCrypto/deriveKey#hkdf
 */
import { toBase64Url, utf8 } from "./encoding.ts";

/** What a key is for: an HMAC-SHA-256 key, or an AES-256-GCM key. */
export type KeyPurpose = "hmac" | "aes-gcm";

/**
 * The algorithm of each purpose. An imported HMAC key is as long as its raw bytes (no `length`:
 * WebCrypto refuses one that disagrees with them); a derived key is 256 bits, given below.
 */
const ALGORITHMS = {
  hmac: { algorithm: { name: "HMAC", hash: "SHA-256" }, usages: ["sign", "verify"] },
  "aes-gcm": { algorithm: { name: "AES-GCM" }, usages: ["encrypt", "decrypt"] },
} as const satisfies Record<KeyPurpose, unknown>;

/** The bits of a derived key: 256, the SHA-256 output (an HMAC key) and AES-256. */
const DERIVED_BITS = 256;

/** SHA-256 of `data` (a string is hashed as UTF-8). */
export async function sha256(data: string | Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", typeof data === "string" ? utf8(data) : data));
}

/** A key of `purpose` whose raw bytes are `raw` (a string is taken as its UTF-8 bytes). */
export function importKey(raw: string | Uint8Array, purpose: KeyPurpose): Promise<CryptoKey> {
  const { algorithm, usages } = ALGORITHMS[purpose];
  return crypto.subtle.importKey("raw", typeof raw === "string" ? utf8(raw) : raw, algorithm, false, [
    ...usages,
  ]);
}

/** HKDF-SHA-256's parameters (WebCrypto's `HkdfParams`). */
type Hkdf = { name: "HKDF"; hash: "SHA-256"; salt: Uint8Array; info: Uint8Array };

/** `secret` as HKDF's input keying material, with HKDF-SHA-256's parameters for `salt` and `info`. */
async function hkdf(secret: string, salt: string, info: string): Promise<{ base: CryptoKey; params: Hkdf }> {
  const base = await crypto.subtle.importKey("raw", utf8(secret), "HKDF", false, ["deriveKey", "deriveBits"]);
  return { base, params: { name: "HKDF", hash: "SHA-256", salt: utf8(salt), info: utf8(info) } };
}

/** A 256-bit key of `purpose` derived from `secret` by HKDF-SHA-256 with `salt` and `info`. */
export async function deriveKey(
  secret: string,
  salt: string,
  info: string,
  purpose: KeyPurpose,
): Promise<CryptoKey> {
  const { base, params } = await hkdf(secret, salt, info);
  const { algorithm, usages } = ALGORITHMS[purpose];
  return crypto.subtle.deriveKey(params, base, { ...algorithm, length: DERIVED_BITS }, false, [...usages]);
}

/**
 * 256 bits derived from `secret` by HKDF-SHA-256 with `salt` and `info`, as base64url text: the
 * secret of one purpose, for a module that takes its configured secret as text (a root secret's
 * purposes, src/config/root-secret.ts). Deterministic: every isolate derives the same text.
 */
export async function deriveSecret(secret: string, salt: string, info: string): Promise<string> {
  const { base, params } = await hkdf(secret, salt, info);
  return toBase64Url(await crypto.subtle.deriveBits(params, base, DERIVED_BITS));
}

/**
 * `make` memoized per secret for the isolate's life, for at most `limit` secrets (the oldest is
 * dropped first): deriving keys costs digests and imports, and a deployment has few secrets.
 */
export function perSecret<T>(
  make: (secret: string) => Promise<T>,
  limit = 16,
): (secret: string) => Promise<T> {
  const memo = new Map<string, Promise<T>>();
  return (secret) => {
    let value = memo.get(secret);
    if (!value) {
      value = make(secret);
      memo.set(secret, value);
      if (memo.size > limit) memo.delete(memo.keys().next().value ?? "");
    }
    return value;
  };
}
