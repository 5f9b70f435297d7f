-- Event logs of store:true responses (version 3): the exact events a client was sent, so a client
-- that lost its connection can resume from its last sequence_number, also after completion.
-- A log is split into chunks (each well under the 2 MB row limit), written once at completion.
CREATE TABLE IF NOT EXISTS event_logs (
  response_id TEXT NOT NULL,
  chunk INTEGER NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (response_id, chunk)
) WITHOUT ROWID;
