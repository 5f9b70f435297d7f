/**
 * A model context with what is known of each item's size in tokens: the unit the render cache
 * stores and the window fitting reads. Owns its construction and the one place items get counted.
 * Invariants: `items[i]` is `counted[i].item`; a `CountedItem` is shared by every cached context
 * that contains it, so once counted (its `tokens` set) every context sees the count; `bound` is
 * an upper bound of the context's tokens (the sum, at construction, of each item's count or bound).
 */
import type { StoredItem } from "../protocol/items.ts";
import type { ConversationStore, ItemKey, ItemTokenCount } from "../store/conversation-store.ts";
import { itemTokens, tokenBound, utf8Length } from "./item-tokens.ts";
import type { CountTokens } from "./tokenizer.ts";

/** One item of a context, with its row and its size. */
export interface CountedItem {
  readonly item: StoredItem;
  /** The item's row in the store (it may not be written yet for the current turn's input). */
  readonly key: ItemKey;
  /** Exact tokens, or null while not counted. Set once, by `countItems`. */
  tokens: number | null;
  /** Upper bound of the tokens (`tokenBound`). */
  readonly bound: number;
}

/** Items, oldest first, with their sizes. */
export interface CountedContext {
  readonly items: readonly StoredItem[];
  readonly counted: readonly CountedItem[];
  /** Upper bound of the context's tokens. */
  readonly bound: number;
}

/** The empty context (a chain's start). */
export const EMPTY_CONTEXT: CountedContext = { items: [], counted: [], bound: 0 };

/**
 * `base` followed by `more`.
 * @returns a new context; `base` is not modified. O(length) reference copies, no re-parsing.
 */
export function appendCounted(base: CountedContext, more: readonly CountedItem[]): CountedContext {
  if (more.length === 0) return base;
  let added = 0;
  for (const c of more) added += c.tokens ?? c.bound;
  return {
    items: [...base.items, ...more.map((c) => c.item)],
    counted: [...base.counted, ...more],
    bound: base.bound + added,
  };
}

/**
 * An upper bound of the tokens of `items` as known now: the exact count of every item counted so
 * far (by this turn or an earlier one: counts are shared), the byte bound of the others.
 * `CountedContext.bound` is fixed when the context is built, so it keeps the bounds of items
 * counted since; this one tightens as counts are made, which keeps a long chain from counting
 * every turn once its byte bound outgrew the window (only its new items are uncounted).
 */
export function currentBound(items: readonly CountedItem[]): number {
  let bound = 0;
  for (const c of items) bound += c.tokens ?? c.bound;
  return bound;
}

/**
 * The context a turn sends before any fitting: history(previous response) with sizes, the turn's
 * own input items, and both together.
 */
export interface TurnContext {
  /** history(previous response), oldest first (empty for a new chain). */
  readonly history: CountedContext;
  /** The turn's own input items, not yet counted; the store writes their counts with the rows. */
  readonly input: readonly CountedItem[];
  /** `history` followed by `input`: what an upstream gets when nothing is dropped. */
  readonly all: CountedContext;
  /**
   * The size of `history` as the upstream itself reported it (the previous response's input plus
   * output tokens, `reportedHistoryTokens` in usage.ts), or null when it is not known.
   */
  readonly reportedHistory: number | null;
}

/**
 * The turn context of response `responseId` (its input items get the keys of the rows the store
 * will insert for them).
 * @param reportedHistory see `TurnContext.reportedHistory`.
 */
export function turnContext(
  responseId: string,
  history: CountedContext,
  input: readonly StoredItem[],
  reportedHistory: number | null = null,
): TurnContext {
  const counted: CountedItem[] = input.map((item, position) => ({
    item,
    key: { responseId, kind: "input", position },
    tokens: null,
    bound: tokenBound(item, utf8Length(JSON.stringify(item))),
  }));
  return { history, input: counted, all: appendCounted(history, counted), reportedHistory };
}

/**
 * Counts every item not counted yet, and persists the new counts on the item rows that exist (one
 * transaction). Rows the store has yet to insert (the current turn's input) get their count when
 * they are inserted: the count stays on the shared `CountedItem` (`TurnContext.input`).
 * @returns the exact tokens of all `items`.
 */
export function countItems(
  items: readonly CountedItem[],
  count: CountTokens,
  store: ConversationStore,
): number {
  const updates: ItemTokenCount[] = [];
  let total = 0;
  for (const c of items) {
    if (c.tokens === null) {
      c.tokens = itemTokens(c.item, count);
      updates.push({ ...c.key, tokens: c.tokens });
    }
    total += c.tokens;
  }
  store.setItemTokens(updates);
  return total;
}
