-- Values larger than a SQLite row (version 4). Production Durable Object SQLite caps a string,
-- BLOB or row at 2 MB (https://developers.cloudflare.com/durable-objects/platform/limits/): an
-- item's JSON or a response's settings longer than one piece (src/store/large-values.ts) is kept
-- in pieces in value_pieces; its own row keeps '' in `data` / `settings` and the number of pieces
-- (0 = stored inline, as every row written before this version).
ALTER TABLE items ADD COLUMN pieces INTEGER NOT NULL DEFAULT 0;
ALTER TABLE responses ADD COLUMN settings_pieces INTEGER NOT NULL DEFAULT 0;
-- kind: 0 an input item, 1 an output item (as items.kind), 2 the response's settings (position 0).
CREATE TABLE IF NOT EXISTS value_pieces (
  response_id TEXT NOT NULL,
  kind INTEGER NOT NULL,
  position INTEGER NOT NULL,
  piece INTEGER NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (response_id, kind, position, piece)
) WITHOUT ROWID;
