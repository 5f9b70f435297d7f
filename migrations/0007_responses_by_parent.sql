-- Children of a response, by index (version 7): deleting a response makes its children the roots
-- of their chains (src/store/response-deletion.ts), one indexed update per deleted response
-- instead of a scan of every response of the session.
CREATE INDEX IF NOT EXISTS responses_by_parent ON responses (parent_id) WHERE parent_id IS NOT NULL;
