-- A tenant Durable Object's schema (version 1), see src/tenancy/tenant-store.ts. Apart from the
-- session Durable Object's migrations (migrations/*.sql): different class, different storage.
-- tenant: one row, the tenant itself.
CREATE TABLE IF NOT EXISTS tenant (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  limits TEXT NOT NULL DEFAULT '{}',
  settings TEXT NOT NULL DEFAULT '{}',
  -- the tenant's own upstream key, AES-GCM sealed (src/tenancy/control-crypto.ts), or NULL
  upstream_key_sealed TEXT
);
-- api_keys: only the SHA-256 of each key and its display prefix; never the key.
CREATE TABLE IF NOT EXISTS api_keys (
  key_id TEXT PRIMARY KEY,
  hash TEXT NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  name TEXT,
  created_at INTEGER NOT NULL,
  last_used_at INTEGER,
  revoked_at INTEGER
);
-- usage: the ledger, one row per UTC day, model, key and status.
CREATE TABLE IF NOT EXISTS usage (
  day TEXT NOT NULL,
  model TEXT NOT NULL,
  key_id TEXT NOT NULL,
  status TEXT NOT NULL,
  turns INTEGER NOT NULL DEFAULT 0,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (day, model, key_id, status)
) WITHOUT ROWID;
-- turn_minutes: turns admitted and their request bytes per minute (epoch minute), for
-- turns_per_minute and request_bytes_per_minute; rows older than 5 minutes are pruned.
CREATE TABLE IF NOT EXISTS turn_minutes (
  minute INTEGER PRIMARY KEY,
  turns INTEGER NOT NULL,
  bytes INTEGER NOT NULL
);
-- usage_sources: the highest outbox sequence number applied per session Durable Object, so a
-- batch delivered twice (a flush retried after a lost reply) is counted once.
CREATE TABLE IF NOT EXISTS usage_sources (
  source TEXT PRIMARY KEY,
  last_seq INTEGER NOT NULL,
  seen_at INTEGER NOT NULL
) WITHOUT ROWID;
-- sockets: leases of open WebSockets (max_sockets, sessions_per_key); a lease not released
-- expires with the connection lifetime.
CREATE TABLE IF NOT EXISTS sockets (
  lease TEXT PRIMARY KEY,
  key_id TEXT NOT NULL,
  session TEXT NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;
