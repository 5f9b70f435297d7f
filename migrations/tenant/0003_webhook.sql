-- The tenant's webhook endpoint (version 3; src/tenancy/tenant-store.ts, docs/webhooks.md): at
-- most one row — its URL and its signing secret, AES-GCM sealed
-- (src/tenancy/control-crypto.ts), never stored in clear.
CREATE TABLE IF NOT EXISTS webhook (
  one INTEGER PRIMARY KEY CHECK (one = 1),
  url TEXT NOT NULL,
  secret_sealed TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
