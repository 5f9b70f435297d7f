/**
 * The byte encodings of every credential, sealed value and id Deltagate issues: base64url without
 * padding (RFC 4648 §5: token characters only, so a value fits a URL, a header and a
 * `Sec-WebSocket-Protocol` entry unescaped), lowercase hex, and UTF-8; and padded standard base64
 * (RFC 4648 §4), the one format Deltagate does not choose: Standard Webhooks' secrets and
 * signatures (src/webhooks/standard-webhooks.ts).
 * Invariant: a decoder never throws on what a client sent; text that is not the encoding (a
 * character outside the alphabet, a length no encoding yields: 1 mod 4 in base64url, odd in hex)
 * decodes to null, so each caller refuses it with its own 4xx.
 * Why `btoa`/`atob`: the Worker runs without `nodejs_compat` (wrangler.toml sets no
 * `compatibility_flags`), so there is no `Buffer`, and `Uint8Array.fromBase64` is not in the
 * unit tests' Node 22; `btoa`/`atob` are in both
 * (https://developers.cloudflare.com/workers/runtime-apis/web-standards/).
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The UTF-8 bytes of `text`. */
export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** The text of UTF-8 `bytes` (invalid sequences become U+FFFD). */
export function fromUtf8(bytes: Uint8Array | ArrayBuffer): string {
  return decoder.decode(bytes);
}

/** `bytes` as base64url without padding. */
export function toBase64Url(bytes: Uint8Array | ArrayBuffer): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let binary = "";
  for (const byte of view) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** The bytes of base64url `text` (unpadded), or null when it is not base64url. */
export function fromBase64Url(text: string): Uint8Array | null {
  if (!BASE64URL.test(text) || text.length % 4 === 1) return null;
  const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** `bytes` as padded standard base64 (RFC 4648 §4). */
export function toBase64(bytes: Uint8Array | ArrayBuffer): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let binary = "";
  for (const byte of view) binary += String.fromCharCode(byte);
  return btoa(binary);
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The bytes of padded standard base64 `text`, or null when it is not that. */
export function fromBase64(text: string): Uint8Array | null {
  if (!BASE64.test(text)) return null;
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** `bytes` as lowercase hex. */
export function toHex(bytes: Uint8Array | ArrayBuffer): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let hex = "";
  for (const byte of view) hex += byte.toString(16).padStart(2, "0");
  return hex;
}

const HEX = /^(?:[0-9a-fA-F]{2})*$/;

/** The bytes of hex `text`, or null when it is not hex. */
export function fromHex(text: string): Uint8Array | null {
  if (!HEX.test(text)) return null;
  const bytes = new Uint8Array(text.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(text.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}
