/**
 * The rolling prefix hash of a chain (transparent deltas, src/resend/): `chain(items)` folds each
 * item's fingerprint (fingerprint.ts) into the hash of the items before it, so the hash of every
 * prefix of a client's input costs one step per item, and a stored response keeps the hash of
 * its history (`history(R)`: every input and output of its chain) to be found by it.
 * The resend key of a response is its settings key and its chain hash together: a request whose
 * input starts with exactly `history(R)`, with R's settings, has R's resend key for that prefix.
 * Invariant: `extendChain(extendChain(h, a), b)` equals `extendChain(h, [...a, ...b])`.
 */
import type { Item } from "../protocol/items.ts";
import { hash128 } from "../util/hash128.ts";
import { itemFingerprint } from "./fingerprint.ts";

/** The hash of the empty chain (a chain's start). */
export const EMPTY_CHAIN = "0".repeat(32);

/** The chain hash after one more item, by its fingerprint. */
export function stepChain(chain: string, fingerprint: string): string {
  return hash128(chain + fingerprint);
}

/** The chain hash of `chain` extended by `items`. */
export function extendChain(chain: string, items: readonly Item[]): string {
  let hash = chain;
  for (const item of items) hash = stepChain(hash, itemFingerprint(item));
  return hash;
}

/** The resend key of a response: its settings key with its chain hash. */
export function resendKey(settings: string, chain: string): string {
  return hash128(`${settings}:${chain}`);
}

export type { ChainState } from "../store/conversation-store.ts";
