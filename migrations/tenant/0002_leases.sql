-- Version 2 (src/tenancy/tenant-store.ts): leases, what each session Durable Object may admit
-- without asking (src/tenancy/lease-policy.ts). One row per session (`source`, its Durable Object
-- id): turns and request bytes it may still admit in `minute`, tokens it holds on `day` (its
-- unsettled reservations and what it may still reserve). A row past `expires_at` holds nothing.
CREATE TABLE IF NOT EXISTS leases (
  source TEXT PRIMARY KEY,
  minute INTEGER NOT NULL,
  turns INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  day TEXT NOT NULL,
  tokens INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;
