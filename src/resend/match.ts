/**
 * Transparent deltas (issue #18): finds the chain a full-history resend continues. A request that
 * names no `previous_response_id` continues response R when its input begins with exactly
 * history(R) — R's chain, every input and output item, matched by content (fingerprint.ts) and
 * by id wherever the client sends one — and has R's settings (model, `store`, instructions, tools
 * and every other setting: the settings key), as Codex requires before it sends a delta itself
 * (openai/codex codex-rs/core/src/client.rs `get_incremental_items`, PR #11343). Only the rest of
 * the input, the tail, is then the turn's own input: the upstream gets it as a delta wherever it
 * can (a warm WebSocket holding R, an `upstream_store` route), the response is stored as R's
 * continuation.
 * Cost: one pass over the input (a fingerprint per item, a hash step per item: the rolling prefix
 * hash, chain-hash.ts), one indexed query for every prefix's key at once, and for a hit the
 * candidate's history from the render cache. No second parse.
 * The same match serves a full resend chained on an empty warm-up (warm-up.ts: the items are the
 * warm-up's input, then the request's) and tells whether a warm-up repeats a chain the session
 * holds (a match of every item): the caller gives the range of prefix lengths it accepts.
 * Invariants: a match is never across tenants (a session belongs to one tenant), never to a
 * response the caller's scope may not continue (`visible`: the store:false scope rule of
 * src/session/scope.ts, through the engine's one call), never to a history changed since it was
 * hashed (an ancestor deleted: the item count differs), and never outside the caller's range (by
 * default at least one item and at least one new item left).
 */
import type { CountedContext } from "../context/counted-context.ts";
import type { Item, StoredItem } from "../protocol/items.ts";
import type { ConversationStore, ResponseRecord } from "../store/conversation-store.ts";
import { EMPTY_CHAIN, resendKey, stepChain } from "./chain-hash.ts";

/** The chain a resend continues: its head, and how many leading input items it covers. */
export interface ResendMatch {
  parent: ResponseRecord;
  /** Leading items of the client's input that are history(parent): they are not the turn's own. */
  matched: number;
}

/** What the matcher reads. */
export interface ResendLookup {
  store: Pick<ConversationStore, "get" | "resendCandidates">;
  /** history(R) as stored, unrepaired (the render cache, or SQLite). */
  history(responseId: string): CountedContext;
  /** Whether the caller may continue this response (tenant's session; store:false scope rule). */
  visible(record: ResponseRecord): boolean;
}

/**
 * The rolling chain hash of every prefix of `fingerprints`, from `start`: element k is the hash
 * of the first k items (element 0 is `start`).
 */
export function prefixChains(fingerprints: readonly string[], start = EMPTY_CHAIN): string[] {
  const chains = [start];
  let hash = start;
  for (const fingerprint of fingerprints) {
    hash = stepChain(hash, fingerprint);
    chains.push(hash);
  }
  return chains;
}

/**
 * The response whose chain the request's input continues, or null: the longest match first.
 * @param settings the request's settings key (fingerprint.ts `settingsKey`).
 * @param given the request's items as the client sent them (ids only where it gave one).
 * @param chains `prefixChains` of their fingerprints.
 * @param shortest the fewest items a match may cover (at least 1).
 * @param longest the most items a match may cover (default: all but one, so a match leaves at
 *   least one new item).
 */
export function findResend(
  lookup: ResendLookup,
  settings: string,
  given: readonly Item[],
  chains: readonly string[],
  shortest = 1,
  longest = given.length - 1,
): ResendMatch | null {
  const first = Math.max(1, shortest);
  const last = Math.min(longest, given.length);
  // keys[k - first]: the resend key of the prefix of k items.
  const keys: string[] = [];
  for (let k = first; k <= last; k++) keys.push(resendKey(settings, chains[k]!));
  for (const candidate of lookup.store.resendCandidates(keys)) {
    const k = candidate.chainItems;
    if (k < first || k > last || keys[k - first] !== candidate.resendKey) continue;
    const parent = lookup.store.get(candidate.id);
    if (parent?.status !== "completed" || !lookup.visible(parent)) continue;
    const history = lookup.history(parent.id).items;
    if (history.length !== k || !idsAgree(given, history, k)) continue;
    return { parent, matched: k };
  }
  return null;
}

/** Whether every id the client gave among the first `k` items is the stored item's id. */
function idsAgree(given: readonly Item[], history: readonly StoredItem[], k: number): boolean {
  for (let i = 0; i < k; i++) {
    const id = given[i]?.id;
    if (id !== undefined && id !== history[i]?.id) return false;
  }
  return true;
}
