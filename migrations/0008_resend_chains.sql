-- Transparent deltas (version 8, src/resend/): each response keeps the rolling hash of its
-- history (every input and output item of its chain: chain_hash over chain_items items; through
-- its own input while it runs) and, once completed, its resend key (its settings with that hash),
-- by which a client's full resend finds the chain it continues. implicit_parent: the response
-- continues parent_id because its input matched that chain, not because the client named it.
ALTER TABLE responses ADD COLUMN chain_hash TEXT;
ALTER TABLE responses ADD COLUMN chain_items INTEGER;
ALTER TABLE responses ADD COLUMN resend_key TEXT;
ALTER TABLE responses ADD COLUMN implicit_parent INTEGER NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS responses_by_resend_key ON responses (resend_key) WHERE resend_key IS NOT NULL;
-- Reasoning items the session returned, by id: a client that resends one without its encrypted
-- content gets it restored (src/resend/reasoning-restore.ts).
CREATE INDEX IF NOT EXISTS items_reasoning_by_id ON items (id) WHERE type = 'reasoning';
