/**
 * Versioned schema of a session Durable Object's SQLite storage. Owns the migration list and
 * runs pending migrations synchronously (SQL calls are synchronous, so no
 * `blockConcurrencyWhile` is needed), all of them in one `transactionSync`, on every wake: a new
 * session applies the whole list at once (one commit instead of one per migration; a session's
 * creation showed in the runtime's profile, issue #27), and a failure leaves the schema as it was.
 * Invariant: `meta.schema_version` equals the highest migration applied; migrations are append-only.
 * Source: https://developers.cloudflare.com/durable-objects/api/sqlite-storage-api/
 */
import v1 from "../../migrations/0001_conversation_state.sql";
import v2 from "../../migrations/0002_item_tokens.sql";
import v3 from "../../migrations/0003_event_logs.sql";
import v4 from "../../migrations/0004_large_values.sql";
import v5 from "../../migrations/0005_released_scopes.sql";
import v6 from "../../migrations/0006_safety.sql";
import v7 from "../../migrations/0007_responses_by_parent.sql";
import v8 from "../../migrations/0008_resend_chains.sql";
import v9 from "../../migrations/0009_items_by_id.sql";
import v10 from "../../migrations/0010_named_parent.sql";
import v11 from "../../migrations/0011_background.sql";
import v12 from "../../migrations/0012_webhook_outbox.sql";
import v13 from "../../migrations/0013_conversations.sql";

/** One schema step: its version number and SQL (several `;`-separated statements allowed). */
export interface Migration {
  version: number;
  sql: string;
}

/** All migrations, in order. Append new ones; never edit an applied one. */
const MIGRATIONS: readonly Migration[] = [
  { version: 1, sql: v1 },
  { version: 2, sql: v2 },
  { version: 3, sql: v3 },
  { version: 4, sql: v4 },
  { version: 5, sql: v5 },
  { version: 6, sql: v6 },
  { version: 7, sql: v7 },
  { version: 8, sql: v8 },
  { version: 9, sql: v9 },
  { version: 10, sql: v10 },
  { version: 11, sql: v11 },
  { version: 12, sql: v12 },
  { version: 13, sql: v13 },
];

/** Applies every migration of the session schema newer than the stored version (see `applyMigrations`). */
export function migrate(storage: DurableObjectStorage): number {
  return applyMigrations(storage, MIGRATIONS);
}

/**
 * Applies every migration of `migrations` newer than the stored version, in one transaction.
 * @returns the schema version after migrating.
 * @throws whatever SQLite raises; the transaction is rolled back (the stored version unchanged).
 */
export function applyMigrations(storage: DurableObjectStorage, migrations: readonly Migration[]): number {
  const sql = storage.sql;
  sql.exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  const row = sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'schema_version'").toArray()[0];
  const current = row ? Number(row.value) : 0;
  const pending = migrations.filter((migration) => migration.version > current);
  const last = pending.at(-1);
  if (!last) return current;
  storage.transactionSync(() => {
    for (const migration of pending) sql.exec(migration.sql);
    sql.exec(
      "INSERT INTO meta (key, value) VALUES ('schema_version', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
      String(last.version),
    );
  });
  return last.version;
}
