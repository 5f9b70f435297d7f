/**
 * Identifier generation. Owns the id formats Deltagate hands out:
 * - response ids `resp_<owner><random>`: `<owner>` is the owning session Durable Object's id
 *   (base64url of its 32 bytes, 43 chars) so the Worker can route any response id to its Durable
 *   Object without a lookup table; `<random>` (22 base64url chars, 128 bits) makes ids unguessable.
 * - item ids `<prefix>_<random>` with OpenAI's prefixes (msg_, fc_, rs_…).
 */

/** Random bytes as base64url without padding. */
export function randomToken(bytes = 16): string {
  const buf = new Uint8Array(bytes);
  crypto.getRandomValues(buf);
  return toBase64Url(buf);
}

function toBase64Url(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): Uint8Array | null {
  try {
    const bin = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
    return Uint8Array.from(bin, (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

const OWNER_CHARS = 43; // base64url of 32 bytes

/**
 * A new response id owned by the Durable Object whose id is `ownerHex` (64 hex chars).
 * @returns `resp_` + 43 owner chars + 22 random chars (70 chars in all).
 */
export function newResponseId(ownerHex: string): string {
  const owner = new Uint8Array(32);
  for (let i = 0; i < 32; i++) owner[i] = Number.parseInt(ownerHex.slice(i * 2, i * 2 + 2), 16);
  return `resp_${toBase64Url(owner)}${randomToken(16)}`;
}

/**
 * The owning Durable Object id (64 lowercase hex chars) of a response id, or null when the id is
 * not one of Deltagate's (wrong prefix or length, bad encoding).
 */
export function responseOwner(responseId: string): string | null {
  if (!responseId.startsWith("resp_") || responseId.length !== 5 + OWNER_CHARS + 22) return null;
  const bytes = fromBase64Url(responseId.slice(5, 5 + OWNER_CHARS));
  if (bytes?.length !== 32) return null;
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A `Map`, so an item type named after an `Object.prototype` member gets `item_` too. */
const ITEM_PREFIX = new Map([
  ["message", "msg"],
  ["function_call", "fc"],
  ["function_call_output", "fco"],
  ["reasoning", "rs"],
]);

/** A new item id with OpenAI's prefix for the item type (`item_` for other types). */
export function newItemId(type: string): string {
  return `${ITEM_PREFIX.get(type) ?? "item"}_${randomToken(16)}`;
}
