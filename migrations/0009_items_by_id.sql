-- Items by id (version 9): an `item_reference` input item names an item the session holds, input
-- or output, by its id (src/resend/item-references.ts). The reasoning-only index of version 8
-- stays for the restore of reasoning items (src/resend/reasoning-restore.ts).
CREATE INDEX IF NOT EXISTS items_by_id ON items (id);
