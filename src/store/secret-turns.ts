/**
 * Turn counts of client secrets that carry `max_turns` (src/auth/client-secret.ts), kept in the
 * session's `meta` table (created by migrations.ts) under `client_secret_turns:<secret id>`, so
 * the count holds across sockets, HTTP requests, hibernation and restarts. A secret is bound to
 * one session, so its count lives in exactly one Durable Object.
 * Invariant: a secret never creates more than `maxTurns` responses; a secret without `max_turns`
 * costs nothing here (no read, no write). Entries of expired secrets are deleted when a new one is
 * written.
 */

const PREFIX = "client_secret_turns:";

/**
 * Counts one turn of a secret.
 * @param expiresAt the secret's expiry (Unix seconds): after it, the entry is garbage.
 * @returns true when the turn is within `maxTurns` (and is now counted), false when the secret
 *   has used them all (nothing is written).
 */
export function countSecretTurn(
  sql: SqlStorage,
  secret: { id: string; maxTurns: number; expiresAt: number },
  nowSeconds: number,
): boolean {
  const key = `${PREFIX}${secret.id}`;
  const row = sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = ?", key).toArray()[0];
  const used = row ? Number(row.value.split(":")[0]) : 0;
  if (used >= secret.maxTurns) return false;
  if (!row) {
    sql.exec(
      "DELETE FROM meta WHERE key LIKE 'client_secret_turns:%' AND CAST(substr(value, instr(value, ':') + 1) AS INTEGER) < ?",
      nowSeconds,
    );
  }
  sql.exec(
    "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    key,
    `${used + 1}:${secret.expiresAt}`,
  );
  return true;
}

/**
 * Gives back one counted turn of a secret (its turn was counted, then refused by the tenant's
 * limits before anything ran), so a refusal that is not the secret's costs it nothing.
 */
export function refundSecretTurn(sql: SqlStorage, secretId: string): void {
  const key = `${PREFIX}${secretId}`;
  const row = sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = ?", key).toArray()[0];
  if (!row) return;
  const [used = "0", expiresAt = "0"] = row.value.split(":");
  sql.exec("UPDATE meta SET value = ? WHERE key = ?", `${Math.max(0, Number(used) - 1)}:${expiresAt}`, key);
}
