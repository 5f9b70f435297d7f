/**
 * The usage outbox of a session Durable Object: one row per finished turn, in the session's own
 * SQLite, until its tenant's Durable Object has applied it (tenant-gate.ts flushes it). Owns the
 * no-loss rule: a row is written in the same synchronous step as the turn's terminal state (so
 * the same storage commit), and deleted only after the tenant acknowledged its sequence number;
 * an evicted or restarted session finds its rows on wake and its alarm flushes them.
 * Owns the exactly-once rule for a call a restart cuts short: each metered upstream call (a turn,
 * a compaction, a forwarded `input_tokens`) is `open`ed (a row in `usage_open`, with the key that
 * made it) when it starts and `close`d when it ends — the open row deleted and the outbox row
 * written in one synchronous step, so one commit; on wake, `recoverOpen` books each call a
 * restart left open as `failed`, in one step too. So every call lands in the outbox once.
 * The tables are created here (not in migrations/) because only this module reads or writes them;
 * an outbox made before the cache and cost columns gets them on construction (`addColumns`), its
 * waiting rows kept (0 cached tokens, no cost).
 */
import { dayOf } from "./clock.ts";
import type { UsageEntry } from "./tenant-store.ts";

/** Rows sent per flush at most. */
export const OUTBOX_BATCH = 500;

/** The outbox of one session. */
export class UsageOutbox {
  private readonly sql: SqlStorage;
  /** Rows waiting (kept in memory, so the alarm's deadline costs no query). */
  private waiting: number;
  /** When the oldest waiting row was written, ms (null: none). */
  private oldest: number | null;

  constructor(sql: SqlStorage) {
    this.sql = sql;
    sql.exec(`CREATE TABLE IF NOT EXISTS usage_outbox (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      day TEXT NOT NULL, model TEXT NOT NULL, key_id TEXT NOT NULL, status TEXT NOT NULL,
      input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, at INTEGER NOT NULL,
      cached_tokens INTEGER NOT NULL DEFAULT 0, cache_write_tokens INTEGER NOT NULL DEFAULT 0,
      cost_nano_usd INTEGER)`);
    addColumns(sql);
    sql.exec(`CREATE TABLE IF NOT EXISTS usage_open (
      id TEXT PRIMARY KEY, model TEXT NOT NULL, key_id TEXT NOT NULL, at INTEGER NOT NULL)`);
    const row = sql
      .exec<{ n: number; at: number | null }>("SELECT COUNT(*) AS n, MIN(at) AS at FROM usage_outbox")
      .one();
    this.waiting = row.n;
    this.oldest = row.at;
  }

  /** Records one finished turn. */
  add(entry: Omit<UsageEntry, "seq">, at: number): void {
    this.sql.exec(
      `INSERT INTO usage_outbox (day, model, key_id, status, input_tokens, output_tokens, at,
         cached_tokens, cache_write_tokens, cost_nano_usd) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      entry.day,
      entry.model,
      entry.keyId,
      entry.status,
      entry.inputTokens,
      entry.outputTokens,
      at,
      entry.cachedTokens,
      entry.cacheWriteTokens,
      entry.costNanoUsd,
    );
    this.waiting++;
    this.oldest ??= at;
  }

  /** A metered call started (`id`: its response id, or its own for a call that stores nothing). */
  open(id: string, model: string, keyId: string, at: number): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO usage_open (id, model, key_id, at) VALUES (?, ?, ?, ?)",
      id,
      model,
      keyId,
      at,
    );
  }

  /** A metered call ended: its open row goes, its outbox row comes, in one synchronous step. */
  close(id: string, entry: Omit<UsageEntry, "seq">, at: number): void {
    this.sql.exec("DELETE FROM usage_open WHERE id = ?", id);
    this.add(entry, at);
  }

  /**
   * Books every call an earlier instance left open (a restart ended it) as `failed` with no
   * tokens (nothing is left to count what its upstream had been sent), on the day it started.
   * @param costOf the cost of a call of `model` with no tokens (0, or null: the model has no price).
   * @returns how many were booked.
   */
  recoverOpen(now: number, costOf: (model: string) => number | null): number {
    const open = this.sql
      .exec<{ id: string; model: string; key_id: string; at: number }>("SELECT * FROM usage_open")
      .toArray();
    for (const row of open) {
      const entry = { day: dayOf(row.at), model: row.model, keyId: row.key_id, status: "failed" };
      const tokens = { inputTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, outputTokens: 0 };
      this.close(row.id, { ...entry, ...tokens, costNanoUsd: costOf(row.model) }, now);
    }
    return open.length;
  }

  /** The oldest rows, up to `OUTBOX_BATCH` (read from storage: what any instance wrote). */
  batch(): UsageEntry[] {
    return this.sql
      .exec<{
        seq: number;
        day: string;
        model: string;
        key_id: string;
        status: string;
        input_tokens: number;
        cached_tokens: number;
        cache_write_tokens: number;
        output_tokens: number;
        cost_nano_usd: number | null;
      }>("SELECT * FROM usage_outbox ORDER BY seq LIMIT ?", OUTBOX_BATCH)
      .toArray()
      .map((row) => ({
        seq: row.seq,
        day: row.day,
        model: row.model,
        keyId: row.key_id,
        status: row.status,
        inputTokens: row.input_tokens,
        cachedTokens: row.cached_tokens,
        cacheWriteTokens: row.cache_write_tokens,
        outputTokens: row.output_tokens,
        costNanoUsd: row.cost_nano_usd,
      }));
  }

  /** Tokens of the waiting rows after `seq` (those a batch ending at `seq` leaves for later). */
  tokensAfter(seq: number): number {
    return (
      this.sql
        .exec<{ n: number | null }>(
          "SELECT SUM(input_tokens + output_tokens) AS n FROM usage_outbox WHERE seq > ?",
          seq,
        )
        .one().n ?? 0
    );
  }

  /** Deletes the rows the tenant applied (seq ≤ `applied`). */
  ack(applied: number): void {
    this.sql.exec("DELETE FROM usage_outbox WHERE seq <= ?", applied);
    const row = this.sql
      .exec<{ n: number; at: number | null }>("SELECT COUNT(*) AS n, MIN(at) AS at FROM usage_outbox")
      .one();
    this.waiting = row.n;
    this.oldest = row.at;
  }

  /** When the oldest waiting row was written, or null when the outbox is empty. */
  oldestAt(): number | null {
    return this.waiting === 0 ? null : this.oldest;
  }
}

/** The columns added after the first outbox schema, with their defaults for rows already waiting. */
const ADDED_COLUMNS = [
  "cached_tokens INTEGER NOT NULL DEFAULT 0",
  "cache_write_tokens INTEGER NOT NULL DEFAULT 0",
  "cost_nano_usd INTEGER",
];

/** Adds to an outbox made before them the columns it lacks (read from its schema in `sqlite_master`). */
function addColumns(sql: SqlStorage): void {
  const schema =
    sql
      .exec<{ sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'usage_outbox'")
      .toArray()[0]?.sql ?? "";
  for (const column of ADDED_COLUMNS) {
    const name = column.slice(0, column.indexOf(" "));
    if (!schema.includes(name)) sql.exec(`ALTER TABLE usage_outbox ADD COLUMN ${column}`);
  }
}
