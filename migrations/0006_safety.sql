-- Safety checks (version 6), see src/safety/verdict-cache.ts.
-- safety_verdicts: a classifier's verdict on a text, by the text's SHA-256, so no text is
-- classified twice by the same classifier in a session (instructions and tools: once per session).
CREATE TABLE IF NOT EXISTS safety_verdicts (
  classifier TEXT NOT NULL,
  hash TEXT NOT NULL,
  flagged INTEGER NOT NULL,
  verdict TEXT NOT NULL,
  checked_at INTEGER NOT NULL,
  PRIMARY KEY (classifier, hash)
) WITHOUT ROWID;
-- safety_chains: responses whose whole history (every input and output of the chain up to and
-- including them) was checked under a policy fingerprint, with the merged verdict, so a turn
-- continuing them checks only what is new.
CREATE TABLE IF NOT EXISTS safety_chains (
  response_id TEXT NOT NULL,
  policy TEXT NOT NULL,
  verdict TEXT NOT NULL,
  PRIMARY KEY (response_id, policy)
) WITHOUT ROWID;
-- The `moderation` results of a response whose request asked for them (Response.moderation).
ALTER TABLE responses ADD COLUMN moderation TEXT;
