/**
 * Signing: HMAC-SHA-256 of a text, its check, and the constant-time comparison of two tags.
 * Invariant: every check takes the same time whatever the presented tag is (WebCrypto's `verify`
 * for a full MAC; `safeEqual` for a truncated one), so timing says nothing of how close a forgery
 * came.
 * Source: https://developer.mozilla.org/en-US/docs/Web/API/SubtleCrypto/sign#hmac
 */
import { utf8 } from "./encoding.ts";

/** HMAC-SHA-256 of `text` (UTF-8) under `key` (32 bytes). */
export async function sign(key: CryptoKey, text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, utf8(text)));
}

/** True when `mac` is the HMAC-SHA-256 of `text` under `key` (constant time). */
export function verify(key: CryptoKey, mac: Uint8Array, text: string): Promise<boolean> {
  return crypto.subtle.verify("HMAC", key, mac, utf8(text));
}

/** Constant-time comparison of two strings of the same length (else false at once: lengths are public). */
export function safeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
