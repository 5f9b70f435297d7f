-- store:false scopes whose socket closed (version 5): a closed socket's store:false responses stay
-- continuable by another socket of the same tenant until released_at + STORE_FALSE_GRACE_MS, then
-- they are purged (src/store/released-scopes.ts). A scope has a row only between its release and
-- its purge.
CREATE TABLE IF NOT EXISTS released_scopes (
  conn_id TEXT PRIMARY KEY,
  released_at INTEGER NOT NULL
) WITHOUT ROWID;
