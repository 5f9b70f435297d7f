/**
 * The SQLite storage of one tenant Durable Object: the tenant row, its API keys (hashes only),
 * the usage ledger, per-minute turn counts, sessions' admission leases, socket leases and its
 * webhook endpoint (the secret sealed). Owns every query of that schema
 * (migrations/tenant/) and the exactly-once rule of usage batches.
 * Invariants: a key is found by its SHA-256 only; a batch of a session's usage outbox is applied
 * at most once (`usage_sources.last_seq`), in one transaction with its ledger rows.
 * Source: https://developers.cloudflare.com/durable-objects/api/sqlite-storage-api/
 */
import v1 from "../../migrations/tenant/0001_tenant.sql";
import v2 from "../../migrations/tenant/0002_leases.sql";
import v3 from "../../migrations/tenant/0003_webhook.sql";
import v4 from "../../migrations/tenant/0004_usage_cache_cost.sql";
import {
  fullLimits,
  type TenantLimits,
  type TenantSettings,
  tenantLimitsSchema,
  tenantSettingsSchema,
} from "./tenant.ts";

// Applied in order, each once (`meta.schema_version` counts them).
const MIGRATIONS = [v1, v2, v3, v4];

/** One finished turn, as a session's outbox reports it (usage-outbox.ts). */
export interface UsageEntry {
  seq: number;
  /** UTC day, `YYYY-MM-DD`. */
  day: string;
  model: string;
  keyId: string;
  status: string;
  /** All input tokens, the cached and cache-write ones included (src/context/turn-cost.ts). */
  inputTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
  /** The call's cost in nano-dollars, null when its model has no price (`PRICES`). */
  costNanoUsd: number | null;
}

/** Turns a session admitted in one minute, and their request bytes. */
export interface Admitted {
  minute: number;
  turns: number;
  bytes: number;
}

/** What one session holds of the tenant's counted limits (lease-policy.ts). */
export interface LeaseRow {
  minute: number;
  turns: number;
  bytes: number;
  day: string;
  tokens: number;
  expiresAt: number;
}

/** A row of the ledger, summed by day, model and status. */
export type UsageRow = {
  day: string;
  model: string;
  status: string;
  turns: number;
  input_tokens: number;
  cached_tokens: number;
  cache_write_tokens: number;
  output_tokens: number;
  /** Sum of the priced turns' costs, nano-dollars; null when none of them was priced. */
  cost_nano_usd: number | null;
  /** Turns whose model had a price (their costs are in `cost_nano_usd`). */
  priced_turns: number;
};

/** A key as listings show it (never the key, never its hash). */
export type KeyRecord = {
  key_id: string;
  prefix: string;
  name: string | null;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
};

/** The tenant row. */
export interface TenantRow {
  id: string;
  name: string;
  created_at: number;
  limits: TenantLimits;
  settings: TenantSettings;
  upstream_key_sealed: string | null;
}

/** How often a key's `last_used_at` is written at most, in ms (a read-mostly hot path). */
const LAST_USED_RESOLUTION_MS = 60_000;

/** Storage of one tenant. */
export class TenantStore {
  private readonly storage: DurableObjectStorage;
  private readonly sql: SqlStorage;

  constructor(storage: DurableObjectStorage) {
    this.storage = storage;
    this.sql = storage.sql;
    this.sql.exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
    const row = this.sql
      .exec<{ value: string }>("SELECT value FROM meta WHERE key = 'schema_version'")
      .toArray()[0];
    const current = row ? Number(row.value) : 0;
    MIGRATIONS.forEach((migration, index) => {
      if (index + 1 <= current) return;
      storage.transactionSync(() => {
        this.sql.exec(migration);
        this.sql.exec(
          "INSERT INTO meta (key, value) VALUES ('schema_version', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
          String(index + 1),
        );
      });
    });
  }

  /** The tenant, or null before it was created. */
  tenant(): TenantRow | null {
    const row = this.sql
      .exec<{
        id: string;
        name: string;
        created_at: number;
        limits: string;
        settings: string;
        upstream_key_sealed: string | null;
      }>("SELECT * FROM tenant LIMIT 1")
      .toArray()[0];
    if (!row) return null;
    return {
      ...row,
      limits: fullLimits(tenantLimitsSchema.parse(JSON.parse(row.limits))),
      settings: tenantSettingsSchema.parse(JSON.parse(row.settings)),
    };
  }

  /** Creates the tenant row; false when it exists already. */
  create(id: string, name: string, now: number): boolean {
    if (this.tenant()) return false;
    this.sql.exec("INSERT INTO tenant (id, name, created_at) VALUES (?, ?, ?)", id, name, now);
    return true;
  }

  /** Replaces limits, settings and/or the sealed upstream key (absent = unchanged). */
  update(change: { limits?: TenantLimits; settings?: TenantSettings; sealed?: string | null }): void {
    if (change.limits) this.sql.exec("UPDATE tenant SET limits = ?", JSON.stringify(change.limits));
    if (change.settings) this.sql.exec("UPDATE tenant SET settings = ?", JSON.stringify(change.settings));
    if (change.sealed !== undefined)
      this.sql.exec("UPDATE tenant SET upstream_key_sealed = ?", change.sealed);
  }

  /** The webhook endpoint: its URL, sealed secret and when it was set (ms), or null. */
  webhook(): { url: string; secretSealed: string; createdAt: number } | null {
    const row = this.sql
      .exec<{ url: string; secret_sealed: string; created_at: number }>(
        "SELECT url, secret_sealed, created_at FROM webhook",
      )
      .toArray()[0];
    return row ? { url: row.url, secretSealed: row.secret_sealed, createdAt: row.created_at } : null;
  }

  /** Sets (or replaces) the webhook endpoint. */
  setWebhook(url: string, secretSealed: string, now: number): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO webhook (one, url, secret_sealed, created_at) VALUES (1, ?, ?, ?)",
      url,
      secretSealed,
      now,
    );
  }

  /** Removes the webhook endpoint; false when there was none. */
  removeWebhook(): boolean {
    return this.sql.exec("DELETE FROM webhook").rowsWritten > 0;
  }

  /** Stores a new key (its hash and prefix). */
  addKey(keyId: string, hash: string, prefix: string, name: string | null, now: number): void {
    this.sql.exec(
      "INSERT INTO api_keys (key_id, hash, prefix, name, created_at) VALUES (?, ?, ?, ?, ?)",
      keyId,
      hash,
      prefix,
      name,
      now,
    );
  }

  /**
   * The key of this hash, when it is not revoked; marks it used (at most once a minute, so the
   * data plane's reads stay reads).
   */
  useKey(hash: string, keyId: string, now: number): KeyRecord | null {
    const row = this.sql
      .exec<KeyRecord>(
        "SELECT key_id, prefix, name, created_at, last_used_at, revoked_at FROM api_keys WHERE hash = ? AND key_id = ?",
        hash,
        keyId,
      )
      .toArray()[0];
    if (!row || row.revoked_at !== null) return null;
    if (row.last_used_at === null || now - row.last_used_at >= LAST_USED_RESOLUTION_MS) {
      this.sql.exec("UPDATE api_keys SET last_used_at = ? WHERE key_id = ?", now, keyId);
    }
    return row;
  }

  keys(): KeyRecord[] {
    return this.sql
      .exec<KeyRecord>(
        "SELECT key_id, prefix, name, created_at, last_used_at, revoked_at FROM api_keys ORDER BY created_at",
      )
      .toArray();
  }

  /** Revokes a key; false when there is no such key. */
  revokeKey(keyId: string, now: number): boolean {
    const known = this.sql.exec("SELECT 1 FROM api_keys WHERE key_id = ?", keyId).toArray().length > 0;
    if (known)
      this.sql.exec("UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE key_id = ?", now, keyId);
    return known;
  }

  /** The revoked keys among `keyIds`. */
  revokedAmong(keyIds: readonly string[]): string[] {
    if (keyIds.length === 0) return [];
    return this.sql
      .exec<{ key_id: string }>(
        `SELECT key_id FROM api_keys WHERE revoked_at IS NOT NULL AND key_id IN (${keyIds.map(() => "?").join(",")})`,
        ...keyIds,
      )
      .toArray()
      .map((row) => row.key_id);
  }

  /**
   * Applies a session's outbox batch once: entries with `seq` above the source's last applied one
   * go to the ledger and the minute counts, in one transaction.
   * @returns the highest seq now applied for `source` (the session deletes up to it).
   */
  applyUsage(source: string, entries: readonly UsageEntry[], now: number): number {
    return this.storage.transactionSync(() => {
      const last =
        this.sql
          .exec<{ last_seq: number }>("SELECT last_seq FROM usage_sources WHERE source = ?", source)
          .toArray()[0]?.last_seq ?? 0;
      let applied = last;
      for (const entry of entries) {
        if (entry.seq <= last) continue;
        // `?? `: a batch of a session still running the code before these fields (a deploy in flight).
        const cost = entry.costNanoUsd ?? null;
        this.sql.exec(
          `INSERT INTO usage (day, model, key_id, status, turns, input_tokens, output_tokens,
             cached_tokens, cache_write_tokens, cost_nano_usd, priced_turns)
           VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (day, model, key_id, status) DO UPDATE SET turns = turns + 1,
             input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens,
             cached_tokens = cached_tokens + excluded.cached_tokens,
             cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens,
             cost_nano_usd = CASE WHEN excluded.cost_nano_usd IS NULL THEN cost_nano_usd
               ELSE COALESCE(cost_nano_usd, 0) + excluded.cost_nano_usd END,
             priced_turns = priced_turns + excluded.priced_turns`,
          entry.day,
          entry.model,
          entry.keyId,
          entry.status,
          entry.inputTokens,
          entry.outputTokens,
          entry.cachedTokens ?? 0,
          entry.cacheWriteTokens ?? 0,
          cost,
          cost === null ? 0 : 1,
        );
        applied = Math.max(applied, entry.seq);
      }
      if (applied !== last || entries.length === 0) {
        this.sql.exec(
          "INSERT INTO usage_sources (source, last_seq, seen_at) VALUES (?, ?, ?) ON CONFLICT (source) DO UPDATE SET last_seq = excluded.last_seq, seen_at = excluded.seen_at",
          source,
          applied,
          now,
        );
      }
      return applied;
    });
  }

  /** Adds turns admitted (and their request bytes) to their minutes; prunes old minutes. */
  addAdmitted(admitted: readonly Admitted[], now: number): void {
    for (const { minute, turns, bytes } of admitted) {
      this.sql.exec(
        "INSERT INTO turn_minutes (minute, turns, bytes) VALUES (?, ?, ?) ON CONFLICT (minute) DO UPDATE SET turns = turns + excluded.turns, bytes = bytes + excluded.bytes",
        minute,
        turns,
        bytes,
      );
    }
    this.sql.exec("DELETE FROM turn_minutes WHERE minute < ?", Math.floor(now / 60_000) - 5);
  }

  /** Turns and request bytes counted in `minute` and tokens counted on `day`, tenant-wide. */
  counters(minute: number, day: string): { turns: number; bytes: number; tokens: number } {
    const row = this.sql
      .exec<{ turns: number; bytes: number }>(
        "SELECT turns, bytes FROM turn_minutes WHERE minute = ?",
        minute,
      )
      .toArray()[0];
    const tokens =
      this.sql
        .exec<{ n: number | null }>(
          "SELECT SUM(input_tokens + output_tokens) AS n FROM usage WHERE day = ?",
          day,
        )
        .toArray()[0]?.n ?? 0;
    return { turns: row?.turns ?? 0, bytes: row?.bytes ?? 0, tokens };
  }

  /**
   * What the sessions other than `source` hold of `minute` (turns, bytes) and `day` (tokens) under
   * unexpired leases, and how many such sessions there are; drops expired leases.
   */
  leasesOfOthers(
    source: string,
    minute: number,
    day: string,
    now: number,
  ): { turns: number; bytes: number; tokens: number; sessions: number } {
    this.sql.exec("DELETE FROM leases WHERE expires_at <= ?", now);
    const row = this.sql
      .exec<{ turns: number | null; bytes: number | null; tokens: number | null; sessions: number }>(
        `SELECT SUM(CASE WHEN minute = ? THEN turns ELSE 0 END) AS turns,
                SUM(CASE WHEN minute = ? THEN bytes ELSE 0 END) AS bytes,
                SUM(CASE WHEN day = ? THEN tokens ELSE 0 END) AS tokens,
                COUNT(*) AS sessions
         FROM leases WHERE source != ?`,
        minute,
        minute,
        day,
        source,
      )
      .one();
    return { turns: row.turns ?? 0, bytes: row.bytes ?? 0, tokens: row.tokens ?? 0, sessions: row.sessions };
  }

  /** Sets (or, with null, drops) what `source` holds. */
  setLease(source: string, lease: LeaseRow | null): void {
    if (!lease) {
      this.sql.exec("DELETE FROM leases WHERE source = ?", source);
      return;
    }
    this.sql.exec(
      "INSERT OR REPLACE INTO leases (source, minute, turns, bytes, day, tokens, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      source,
      lease.minute,
      lease.turns,
      lease.bytes,
      lease.day,
      lease.tokens,
      lease.expiresAt,
    );
  }

  /** The ledger from `since` (a UTC day) on, by day, model and status. */
  usage(since: string): UsageRow[] {
    return this.sql
      .exec<UsageRow>(
        `SELECT day, model, status, SUM(turns) AS turns, SUM(input_tokens) AS input_tokens,
           SUM(cached_tokens) AS cached_tokens, SUM(cache_write_tokens) AS cache_write_tokens,
           SUM(output_tokens) AS output_tokens, SUM(cost_nano_usd) AS cost_nano_usd,
           SUM(priced_turns) AS priced_turns
         FROM usage WHERE day >= ? GROUP BY day, model, status ORDER BY day, model, status`,
        since,
      )
      .toArray();
  }

  /**
   * Takes a socket lease unless a limit is reached (leases past their expiry do not count).
   * @returns null when taken, else the limit that refused it.
   */
  openSocket(
    lease: { lease: string; keyId: string; session: string; expiresAt: number },
    limits: TenantLimits,
    now: number,
  ): "max_sockets" | "sessions_per_key" | null {
    this.sql.exec("DELETE FROM sockets WHERE expires_at <= ?", now);
    if (limits.max_sockets !== null) {
      const open = this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM sockets").one().n;
      if (open >= limits.max_sockets) return "max_sockets";
    }
    if (limits.sessions_per_key !== null) {
      const sessions = this.sql
        .exec<{ session: string }>("SELECT DISTINCT session FROM sockets WHERE key_id = ?", lease.keyId)
        .toArray()
        .map((row) => row.session);
      if (!sessions.includes(lease.session) && sessions.length >= limits.sessions_per_key) {
        return "sessions_per_key";
      }
    }
    this.sql.exec(
      "INSERT OR REPLACE INTO sockets (lease, key_id, session, expires_at) VALUES (?, ?, ?, ?)",
      lease.lease,
      lease.keyId,
      lease.session,
      lease.expiresAt,
    );
    return null;
  }

  closeSocket(lease: string): void {
    this.sql.exec("DELETE FROM sockets WHERE lease = ?", lease);
  }

  /** Open socket leases (for the admin view). */
  openSockets(now: number): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM sockets WHERE expires_at > ?", now).one()
      .n;
  }
}
