/**
 * Values larger than a SQLite row (migration 0004): an item's JSON or a response's settings that
 * is longer than `PIECE_UNITS` is written as pieces in `value_pieces`, keyed like the item it
 * belongs to, and read back whole. Production Durable Object SQLite caps a string, BLOB or row at
 * 2 MB (https://developers.cloudflare.com/durable-objects/platform/limits/; a local workerd
 * accepts more, which would hide the failure until deploy).
 * Invariants: every piece is at most `PIECE_UNITS` UTF-16 code units, hence at most 3 × that in
 * UTF-8 bytes (768 KiB), whatever the text; a piece never ends between the two halves of a
 * surrogate pair (SQLite stores UTF-8, where a lone half would become U+FFFD), so the pieces join
 * back to exactly the text written; a value's pieces are written and deleted in the caller's
 * transaction, together with the row that owns them.
 */

/** Longest piece, and longest value kept inline in its own row, in UTF-16 code units. */
export const PIECE_UNITS = 256 * 1024;

/** `value_pieces.kind` of a response's settings (items use their own kind, 0 or 1). */
export const SETTINGS_KIND = 2;

/** `value_pieces.kind` of a conversation's item (keyed by the conversation's id and the item's seq). */
export const CONVERSATION_ITEM_KIND = 3;

/** Where a value lives: its response, kind (0 input item, 1 output item, 2 settings), position. */
export interface ValueKey {
  responseId: string;
  kind: number;
  position: number;
}

/** `text` cut into pieces of at most `units` code units, never inside a surrogate pair. */
export function splitPieces(text: string, units = PIECE_UNITS): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + units, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff && end - 1 > start) end--; // keep the pair whole
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}

/** A value as read back: its text and its size in UTF-8 bytes. */
export interface StoredValue {
  text: string;
  bytes: number;
}

/** Reads and writes the pieces of large values. */
export class LargeValueStore {
  private readonly sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  /**
   * Stores `text` for `key` (call inside the transaction that writes the owning row).
   * @returns what the owning row keeps: the text itself when it fits inline (0 pieces), else ''
   *   and the number of pieces written.
   */
  write(key: ValueKey, text: string): { inline: string; pieces: number } {
    if (text.length <= PIECE_UNITS) return { inline: text, pieces: 0 };
    const pieces = splitPieces(text);
    pieces.forEach((data, piece) => {
      this.sql.exec(
        "INSERT INTO value_pieces (response_id, kind, position, piece, data) VALUES (?, ?, ?, ?, ?)",
        key.responseId,
        key.kind,
        key.position,
        piece,
        data,
      );
    });
    return { inline: "", pieces: pieces.length };
  }

  /** The whole text of a value stored in pieces. */
  read(key: ValueKey): StoredValue {
    const rows = this.sql
      .exec<{ data: string; bytes: number }>(
        `SELECT data, length(CAST(data AS BLOB)) AS bytes FROM value_pieces
         WHERE response_id = ? AND kind = ? AND position = ? ORDER BY piece`,
        key.responseId,
        key.kind,
        key.position,
      )
      .toArray();
    let bytes = 0;
    for (const row of rows) bytes += row.bytes;
    return { text: rows.map((row) => row.data).join(""), bytes };
  }

  /** Deletes the pieces of one value (a conversation item's, src/store/conversations.ts). */
  deleteValue(key: ValueKey): void {
    this.sql.exec(
      "DELETE FROM value_pieces WHERE response_id = ? AND kind = ? AND position = ?",
      key.responseId,
      key.kind,
      key.position,
    );
  }

  /** Deletes every piece of one response (its items' and its settings'). */
  deleteResponse(responseId: string): void {
    this.sql.exec("DELETE FROM value_pieces WHERE response_id = ?", responseId);
  }
}
