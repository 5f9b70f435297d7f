/**
 * Resends chained on a warm-up (issue #27): Codex opens every new socket (a reconnect, `codex exec
 * resume`) with a `generate: false` warm-up that names no `previous_response_id` — its
 * instructions message, with its tools — and chains its first turn on that warm-up with the rest
 * of the whole conversation so far as input (codex-cli 0.171.0, test/support/codex-notes.md and
 * test/node/e2e-codex-resume.test.ts). The turn's context is
 * the warm-up's input followed by the turn's own: a full resend split over two requests. The
 * engine matches those items against the chains the session holds exactly as it matches an
 * unchained resend (match.ts), so the turn continues the held chain and only its new items go
 * upstream.
 * Owns which named parent counts as such a warm-up, and its items as the client gave them.
 * Invariant: only a response whose history is exactly its own input qualifies — no parent, no
 * output, completed, its chain hash kept — with the request's settings key (model, `store`,
 * instructions, tools, every other setting: as for any match), so the warm-up's input followed by
 * the request's is exactly the context the request continues.
 */
import type { CountedContext } from "../context/counted-context.ts";
import type { Item, StoredItem } from "../protocol/items.ts";
import { isRecord } from "../protocol/json.ts";
import type { ConversationStore, ResponseRecord } from "../store/conversation-store.ts";
import { isMintedItemId } from "../util/ids.ts";
import { settingsKey } from "./fingerprint.ts";

/** What `warmUpInput` reads. */
export interface WarmUpLookup {
  store: Pick<ConversationStore, "outputCount">;
  /** history(R) as stored (the render cache, or SQLite): a warm-up's is its input. */
  history(responseId: string): CountedContext;
}

/**
 * The input of `parent` when it is an empty warm-up a resend may be chained on — no parent, no
 * output, completed, with the settings key `settings` — else null. Cheap for any other parent:
 * its record decides (a parent, or output tokens in its usage), else one indexed count; the
 * settings key and the items are read only for an empty response (the items from the render
 * cache, which the turn reads anyway).
 * @param settings the request's settings key (fingerprint.ts `settingsKey`).
 */
export function warmUpInput(
  lookup: WarmUpLookup,
  parent: ResponseRecord,
  settings: string,
): readonly StoredItem[] | null {
  const chain = parent.chain;
  if (parent.parentId !== null || parent.status !== "completed" || !chain) return null;
  // A response that generated tokens has output (no query for the usual parent); else count.
  if (isRecord(parent.usage) && Number(parent.usage.output_tokens) > 0) return null;
  if (lookup.store.outputCount(parent.id) !== 0) return null;
  if (settingsKey(parent, parent.settings) !== settings) return null;
  const input = lookup.history(parent.id).items;
  // Its chain was hashed over exactly these items (none deleted since).
  return input.length === chain.items ? input : null;
}

/**
 * A warm-up's stored items as its client gave them: an id Deltagate minted for an item sent
 * without one is left out, so the match compares that item by content alone (match.ts).
 */
export function givenItems(items: readonly StoredItem[]): Item[] {
  return items.map((item) => {
    if (!isMintedItemId(item.id)) return item;
    const { id: _minted, ...rest } = item;
    return rest as Item;
  });
}
