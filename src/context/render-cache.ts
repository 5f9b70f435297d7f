/**
 * The per-session render cache: `history(R)` of recent responses, as items with their sizes, kept
 * in memory while the Durable Object is awake, so a chained turn reads only its delta from SQLite
 * (the parent's output rows) instead of re-running the recursive history query and re-parsing
 * every item of the chain. SQLite stays the source of truth (it survives hibernation and eviction);
 * the cache is only a copy, and token counts made on cached items are persisted as they are made.
 *
 * Entries: `complete` = history(R) exactly; `pending` = history(parent(R)) + input(R), recorded when
 * R's turn starts, completed on first use by appending R's stored output (so the entry needs no
 * hook after the turn ends and always matches what the store committed, whatever the outcome; the
 * store hands over the rows it just wrote rather than reading them back, `outputRows`).
 * Invariants: an entry is used only in the store's `historyEpoch` it was read in (a deleted or
 * re-parented response changes histories, and clears the cache); the cache is bounded
 * (least-recently-used eviction by entry count); a cache hit and a miss return equal contexts.
 */
import type { ConversationStore, ItemRow } from "../store/conversation-store.ts";
import { appendCounted, type CountedContext, type CountedItem, EMPTY_CONTEXT } from "./counted-context.ts";
import { tokenBound } from "./item-tokens.ts";

/** Default number of histories kept per session. */
const DEFAULT_RENDER_CACHE_ENTRIES = 16;

interface Entry {
  context: CountedContext;
  /** False while the entry lacks the response's own output. */
  complete: boolean;
}

function fromRow(row: ItemRow): CountedItem {
  const { item, tokens, bytes, ...key } = row;
  return { item, key, tokens, bound: tokenBound(item, bytes) };
}

/** Cached histories of one session's responses. */
export class RenderCache {
  private readonly store: ConversationStore;
  private readonly capacity: number;
  private readonly entries = new Map<string, Entry>();
  private epoch: number;

  /**
   * @param store the session's conversation store (source of truth).
   * @param capacity histories kept (least recently used evicted first).
   */
  constructor(store: ConversationStore, capacity = DEFAULT_RENDER_CACHE_ENTRIES) {
    this.store = store;
    this.capacity = capacity;
    this.epoch = store.historyEpoch;
  }

  /**
   * history(responseId) with sizes: from memory when cached, else its missing part (the
   * response's output) or all of it from SQLite. Synchronous (no cursor outlives the call).
   * The caller has checked that the response exists and is finished.
   */
  history(responseId: string): CountedContext {
    this.syncEpoch();
    const entry = this.entries.get(responseId);
    if (entry?.complete) {
      this.set(responseId, entry);
      return entry.context;
    }
    const rows = entry ? this.store.outputRows(responseId) : this.store.historyRows(responseId);
    const context = appendCounted(entry ? entry.context : EMPTY_CONTEXT, rows.map(fromRow));
    this.set(responseId, { context, complete: true });
    return context;
  }

  /**
   * Records the context a starting turn sends (history of its parent + its own input) as the
   * pending history of `responseId`; its output is appended from storage on first use.
   */
  remember(responseId: string, turnContext: CountedContext): void {
    this.syncEpoch();
    this.set(responseId, { context: turnContext, complete: false });
  }

  private syncEpoch(): void {
    if (this.store.historyEpoch !== this.epoch) {
      this.entries.clear();
      this.epoch = this.store.historyEpoch;
    }
  }

  /** Inserts or refreshes an entry as the most recently used, evicting the least recent ones. */
  private set(responseId: string, entry: Entry): void {
    this.entries.delete(responseId);
    this.entries.set(responseId, entry);
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }
}
