/**
 * Sealing: AES-256-GCM with a random 96-bit IV and the 128-bit tag, bound to its context by the
 * additional data (a tenant, a purpose), so a sealed value copied to another context does not
 * open. One layout, `iv ‖ ciphertext ‖ tag`; each format around it (compaction items, tenants'
 * upstream keys) is its owner's.
 * Invariant: `open` returns the exact plaintext sealed with this key and this additional data, or
 * null; never partial or unauthenticated bytes, and it never throws on what a client sent.
 * Source: https://developer.mozilla.org/en-US/docs/Web/API/SubtleCrypto/encrypt#aes-gcm
 */
import { utf8 } from "./encoding.ts";

/** Bytes of the IV that starts a sealed value. */
export const IV_BYTES = 12;
/** Bytes of the authentication tag that ends it. */
const TAG_BYTES = 16;

/** `plaintext` (a string as UTF-8) sealed with `key` for `associatedData`: `iv ‖ ciphertext ‖ tag`. */
export async function seal(
  key: CryptoKey,
  plaintext: string | Uint8Array,
  associatedData: string,
): Promise<Uint8Array> {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt(
      { name: "AES-GCM", iv, additionalData: utf8(associatedData) },
      key,
      typeof plaintext === "string" ? utf8(plaintext) : plaintext,
    ),
  );
  const out = new Uint8Array(IV_BYTES + sealed.length);
  out.set(iv);
  out.set(sealed, IV_BYTES);
  return out;
}

/** The plaintext of `sealed` (`iv ‖ ciphertext ‖ tag`), or null when it does not authenticate. */
export async function open(
  key: CryptoKey,
  sealed: Uint8Array,
  associatedData: string,
): Promise<Uint8Array | null> {
  if (sealed.length < IV_BYTES + TAG_BYTES) return null;
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: sealed.subarray(0, IV_BYTES), additionalData: utf8(associatedData) },
      key,
      sealed.subarray(IV_BYTES),
    );
    return new Uint8Array(plain);
  } catch {
    return null; // WebCrypto's OperationError: another key, another context, or a changed byte
  }
}
