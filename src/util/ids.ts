/**
 * Identifier generation. Owns the id formats Deltagate hands out:
 * - response ids `resp_<owner><random>`: `<owner>` is the owning session Durable Object's id
 *   (base64url of its 32 bytes, 43 chars) so the Worker can route any response id to its Durable
 *   Object without a lookup table; `<random>` (22 base64url chars, 128 bits) makes ids unguessable.
 * - conversation ids `conv_<owner><random>`, the same shape: the session Durable Object that holds
 *   the conversation (docs/conversations.md), found from the id alone.
 * - item ids `<prefix>_<token>` with OpenAI's prefixes (msg_, fc_, rs_…): 24 base64url chars of
 *   120 random bits plus a 24-bit check of them, so Deltagate can tell an id it minted (for an
 *   item a client sent without one, or an upstream item it re-keyed) from an id the client or an
 *   upstream issued — a minted id never goes upstream (src/upstream/item-conversion.ts). A
 *   foreign id of the same shape passes the check with probability 2^-24.
 */
import { fromBase64Url, fromHex, toBase64Url, toHex } from "../crypto/encoding.ts";

/** Random bytes as base64url without padding. */
export function randomToken(bytes = 16): string {
  const buf = new Uint8Array(bytes);
  crypto.getRandomValues(buf);
  return toBase64Url(buf);
}

const OWNER_CHARS = 43; // base64url of 32 bytes

/**
 * A new response id owned by the Durable Object whose id is `ownerHex` (64 hex chars).
 * @returns `resp_` + 43 owner chars + 22 random chars (70 chars in all).
 */
export function newResponseId(ownerHex: string): string {
  return ownedId("resp_", ownerHex);
}

/** A new conversation id owned by the Durable Object `ownerHex`: `conv_` + 43 owner + 22 random chars. */
export function newConversationId(ownerHex: string): string {
  return ownedId("conv_", ownerHex);
}

function ownedId(prefix: string, ownerHex: string): string {
  const owner = fromHex(ownerHex);
  if (owner?.length !== 32) throw new TypeError("a Durable Object id is 64 hex digits");
  return `${prefix}${toBase64Url(owner)}${randomToken(16)}`;
}

/**
 * The owning Durable Object id (64 lowercase hex chars) of a response id, or null when the id is
 * not one of Deltagate's (wrong prefix or length, bad encoding).
 */
export function responseOwner(responseId: string): string | null {
  return ownerOf("resp_", responseId);
}

/** The owning Durable Object id of a conversation id, or null when it is not one of Deltagate's. */
export function conversationOwner(conversationId: string): string | null {
  return ownerOf("conv_", conversationId);
}

function ownerOf(prefix: string, id: string): string | null {
  if (!id.startsWith(prefix) || id.length !== prefix.length + OWNER_CHARS + 22) return null;
  const bytes = fromBase64Url(id.slice(prefix.length, prefix.length + OWNER_CHARS));
  if (bytes?.length !== 32) return null;
  return toHex(bytes);
}

/** A `Map`, so an item type named after an `Object.prototype` member gets `item_` too. */
const ITEM_PREFIX = new Map([
  ["message", "msg"],
  ["function_call", "fc"],
  ["function_call_output", "fco"],
  ["reasoning", "rs"],
  ["compaction", "cmp"],
]);

/** Prefixes of minted item ids: OpenAI's, and `item` for other types. */
const MINTED_PREFIXES: ReadonlySet<string> = new Set([...ITEM_PREFIX.values(), "item"]);
/** Random and check bytes of a minted item id's token (18 bytes = 24 base64url chars). */
const RANDOM_BYTES = 15;
const CHECK_BYTES = 3;
const TOKEN_CHARS = 24;

/** The 24-bit check of a minted id's random bytes (FNV-1a, 32-bit, low 24 bits). */
function checkOf(random: Uint8Array): number {
  let hash = 0x811c9dc5;
  for (const byte of random) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  return hash & 0xffffff;
}

/** A new item id with OpenAI's prefix for the item type (`item_` for other types). */
export function newItemId(type: string): string {
  const bytes = new Uint8Array(RANDOM_BYTES + CHECK_BYTES);
  const random = bytes.subarray(0, RANDOM_BYTES);
  crypto.getRandomValues(random);
  const check = checkOf(random);
  bytes.set([check >>> 16, (check >>> 8) & 0xff, check & 0xff], RANDOM_BYTES);
  return `${ITEM_PREFIX.get(type) ?? "item"}_${toBase64Url(bytes)}`;
}

/** True when `id` is an item id Deltagate minted (`newItemId`), not one a client or an upstream issued. */
export function isMintedItemId(id: string): boolean {
  const cut = id.length - TOKEN_CHARS - 1;
  if (cut < 1 || id[cut] !== "_" || !MINTED_PREFIXES.has(id.slice(0, cut))) return false;
  const token = id.slice(cut + 1);
  const bytes = fromBase64Url(token);
  if (bytes?.length !== RANDOM_BYTES + CHECK_BYTES) return false;
  const check = (bytes[RANDOM_BYTES]! << 16) | (bytes[RANDOM_BYTES + 1]! << 8) | bytes[RANDOM_BYTES + 2]!;
  return check === checkOf(bytes.subarray(0, RANDOM_BYTES));
}
