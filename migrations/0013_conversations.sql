-- Conversations (version 13, src/store/conversations.ts; docs/conversations.md): OpenAI's
-- Conversations API. A conversation lives in the session Durable Object its id names
-- (src/util/ids.ts), so it belongs to that session's one tenant.
-- conversations: one row per conversation; metadata is its JSON object of strings.
CREATE TABLE IF NOT EXISTS conversations (
  id TEXT PRIMARY KEY,
  metadata TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
-- conversation_items: its items in order (seq grows with each append); an item's JSON longer than
-- one row is kept in value_pieces (kind 3, keyed by the conversation's id and the item's seq).
CREATE TABLE IF NOT EXISTS conversation_items (
  conversation_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  id TEXT NOT NULL,
  data TEXT NOT NULL,
  pieces INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (conversation_id, seq)
) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS conversation_items_by_id ON conversation_items (conversation_id, id);
-- responses.conversation_id: the conversation a turn continued (its Response's `conversation`),
-- whose items its input and output are appended to when it completes.
ALTER TABLE responses ADD COLUMN conversation_id TEXT;
