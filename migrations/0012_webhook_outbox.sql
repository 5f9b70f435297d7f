-- The webhook outbox (version 12, src/store/webhook-outbox.ts; docs/webhooks.md): one
-- row per event of a background response that ended, written in the same synchronous step as the
-- response's terminal state (so in the same commit), kept until its endpoint answered 2xx or it was
-- given up (its last attempt, 72 hours, 410 Gone, no endpoint, a refused target). next_at: when the
-- next attempt is due; in_flight: 1 while an attempt runs (an instance that wakes finds an attempt
-- a restart or eviction cut short by it, and makes it again at once).
CREATE TABLE IF NOT EXISTS webhook_outbox (
  delivery_id TEXT PRIMARY KEY,
  response_id TEXT NOT NULL,
  type TEXT NOT NULL,
  body TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_at INTEGER NOT NULL,
  in_flight INTEGER NOT NULL DEFAULT 0,
  last_status INTEGER,
  last_error TEXT
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS webhook_outbox_due ON webhook_outbox (next_at);
