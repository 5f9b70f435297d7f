-- Conversation state of one session Durable Object (version 1).
-- responses: one row per response; parent_id is previous_response_id (forks share a parent).
-- conn_id is set only for store:false responses: the WebSocket connection that owns them.
CREATE TABLE IF NOT EXISTS responses (
  id TEXT PRIMARY KEY,
  parent_id TEXT,
  conn_id TEXT,
  store INTEGER NOT NULL,
  status TEXT NOT NULL,
  model TEXT NOT NULL,
  settings TEXT NOT NULL,
  usage TEXT,
  error TEXT,
  incomplete_details TEXT,
  created_at INTEGER NOT NULL,
  completed_at INTEGER
);
CREATE INDEX IF NOT EXISTS responses_by_conn ON responses (conn_id) WHERE conn_id IS NOT NULL;
-- items: every input (kind 0) and output (kind 1) item of a response, in order.
CREATE TABLE IF NOT EXISTS items (
  response_id TEXT NOT NULL,
  kind INTEGER NOT NULL,
  position INTEGER NOT NULL,
  id TEXT NOT NULL,
  type TEXT NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (response_id, kind, position)
) WITHOUT ROWID;
