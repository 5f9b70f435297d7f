/**
 * Conversations (OpenAI's Conversations API, docs/conversations.md) in a session Durable Object's
 * SQLite (migration 0013): a conversation's row (metadata, creation time) and its items in order.
 * Owns the one deletion of conversation items (`removeItems`): `DELETE …/items/{item_id}` and
 * `DELETE /v1/conversations/{id}` both go through it, with the items' value pieces
 * (large-values.ts). The responses a conversation's turns created are not its items: they keep
 * their own retention and deletion (response-deletion.ts), as OpenAI keeps them.
 * Invariants: an item id appears at most once in a conversation (a turn's append skips items the
 * conversation already holds: a full resend of its items is not appended twice); `seq` only grows,
 * so the order of items is the order they were added; every write is one transaction.
 * Source: https://platform.openai.com/docs/api-reference/conversations
 */
import type { StoredItem } from "../protocol/items.ts";
import { CONVERSATION_ITEM_KIND, type LargeValueStore } from "./large-values.ts";

/** A conversation's row. */
export interface ConversationRecord {
  id: string;
  metadata: Record<string, string>;
  /** ms since the epoch. */
  createdAt: number;
}

/** One page of a conversation's items. */
export interface ItemsPage {
  items: StoredItem[];
  hasMore: boolean;
}

interface ItemRow extends Record<string, SqlStorageValue> {
  seq: number;
  id: string;
  data: string;
  pieces: number;
}

/** The conversations of one session Durable Object. */
export class Conversations {
  private readonly storage: DurableObjectStorage;
  private readonly large: LargeValueStore;

  constructor(storage: DurableObjectStorage, large: LargeValueStore) {
    this.storage = storage;
    this.large = large;
  }

  private get sql(): SqlStorage {
    return this.storage.sql;
  }

  /** Creates a conversation with its first items, in one transaction. */
  create(record: ConversationRecord, items: readonly StoredItem[]): void {
    this.storage.transactionSync(() => {
      this.sql.exec(
        "INSERT INTO conversations (id, metadata, created_at) VALUES (?, ?, ?)",
        record.id,
        JSON.stringify(record.metadata),
        record.createdAt,
      );
      this.insert(record.id, items, record.createdAt);
    });
  }

  /** The conversation, or null when unknown (or deleted). */
  get(id: string): ConversationRecord | null {
    const row = this.sql
      .exec<{ metadata: string; created_at: number }>(
        "SELECT metadata, created_at FROM conversations WHERE id = ?",
        id,
      )
      .toArray()[0];
    if (!row) return null;
    return { id, metadata: JSON.parse(row.metadata) as Record<string, string>, createdAt: row.created_at };
  }

  /** Replaces its metadata; false when the conversation is unknown. */
  setMetadata(id: string, metadata: Record<string, string>): boolean {
    return (
      this.sql.exec("UPDATE conversations SET metadata = ? WHERE id = ?", JSON.stringify(metadata), id)
        .rowsWritten > 0
    );
  }

  /**
   * Appends items (those whose id the conversation already holds are skipped). Call inside the
   * caller's transaction when it must share one (a turn's commit, conversation-store.ts `finish`).
   * @returns the items appended.
   */
  append(id: string, items: readonly StoredItem[], now: number): StoredItem[] {
    let added: StoredItem[] = [];
    this.storage.transactionSync(() => {
      added = this.insert(id, items, now);
    });
    return added;
  }

  /** Deletes the conversation and, through `removeItems`, all its items; false when unknown. */
  delete(id: string): boolean {
    let deleted = false;
    this.storage.transactionSync(() => {
      deleted = this.sql.exec("DELETE FROM conversations WHERE id = ?", id).rowsWritten > 0;
      if (deleted) this.removeItems(id, null);
    });
    return deleted;
  }

  /**
   * The one deletion of conversation items: the item `itemId` (null: every item) with its value
   * pieces. @returns how many were deleted.
   */
  removeItems(id: string, itemId: string | null): number {
    let count = 0;
    this.storage.transactionSync(() => {
      const rows = this.sql
        .exec<{ seq: number; pieces: number }>(
          itemId === null
            ? "SELECT seq, pieces FROM conversation_items WHERE conversation_id = ?"
            : "SELECT seq, pieces FROM conversation_items WHERE conversation_id = ? AND id = ?",
          ...(itemId === null ? [id] : [id, itemId]),
        )
        .toArray();
      for (const row of rows) {
        if (row.pieces > 0) {
          this.large.deleteValue({ responseId: id, kind: CONVERSATION_ITEM_KIND, position: row.seq });
        }
        this.sql.exec("DELETE FROM conversation_items WHERE conversation_id = ? AND seq = ?", id, row.seq);
      }
      count = rows.length;
    });
    return count;
  }

  /** Every item, oldest first (a turn's context). */
  items(id: string): StoredItem[] {
    const rows = this.sql
      .exec<ItemRow>(
        "SELECT seq, id, data, pieces FROM conversation_items WHERE conversation_id = ? ORDER BY seq",
        id,
      )
      .toArray();
    return rows.map((row) => this.decode(id, row));
  }

  /** One item, or null. */
  item(id: string, itemId: string): StoredItem | null {
    const row = this.sql
      .exec<ItemRow>(
        "SELECT seq, id, data, pieces FROM conversation_items WHERE conversation_id = ? AND id = ?",
        id,
        itemId,
      )
      .toArray()[0];
    return row ? this.decode(id, row) : null;
  }

  /**
   * A page of items after the item `after` (exclusive; null from the start) in `order`.
   * @returns null when `after` is not an item of the conversation.
   */
  page(id: string, after: string | null, limit: number, order: "asc" | "desc"): ItemsPage | null {
    let from: number | null = null;
    if (after !== null) {
      const row = this.sql
        .exec<{ seq: number }>(
          "SELECT seq FROM conversation_items WHERE conversation_id = ? AND id = ?",
          id,
          after,
        )
        .toArray()[0];
      if (!row) return null;
      from = row.seq;
    }
    const cmp = order === "asc" ? ">" : "<";
    const dir = order === "asc" ? "ASC" : "DESC";
    const rows = this.sql
      .exec<ItemRow>(
        `SELECT seq, id, data, pieces FROM conversation_items
         WHERE conversation_id = ? ${from === null ? "" : `AND seq ${cmp} ?`} ORDER BY seq ${dir} LIMIT ?`,
        ...(from === null ? [id, limit + 1] : [id, from, limit + 1]),
      )
      .toArray();
    return {
      items: rows.slice(0, limit).map((row) => this.decode(id, row)),
      hasMore: rows.length > limit,
    };
  }

  private insert(id: string, items: readonly StoredItem[], now: number): StoredItem[] {
    const last = this.sql
      .exec<{ seq: number | null }>(
        "SELECT MAX(seq) AS seq FROM conversation_items WHERE conversation_id = ?",
        id,
      )
      .one().seq;
    let seq = last ?? -1;
    const added: StoredItem[] = [];
    for (const item of items) {
      const held = this.sql
        .exec("SELECT 1 FROM conversation_items WHERE conversation_id = ? AND id = ?", id, item.id)
        .toArray().length;
      if (held > 0) continue;
      seq++;
      const data = this.large.write(
        { responseId: id, kind: CONVERSATION_ITEM_KIND, position: seq },
        JSON.stringify(item),
      );
      this.sql.exec(
        "INSERT INTO conversation_items (conversation_id, seq, id, data, pieces, created_at) VALUES (?, ?, ?, ?, ?, ?)",
        id,
        seq,
        item.id,
        data.inline,
        data.pieces,
        now,
      );
      added.push(item);
    }
    return added;
  }

  private decode(id: string, row: ItemRow): StoredItem {
    const text =
      row.pieces > 0
        ? this.large.read({ responseId: id, kind: CONVERSATION_ITEM_KIND, position: row.seq }).text
        : row.data;
    return JSON.parse(text) as StoredItem;
  }
}
