-- Cached token counts (version 2): items.tokens is an item's size in tokens (o200k_base, see
-- src/context/item-tokens.ts), written when first counted so no later turn tokenizes it again.
-- NULL = not counted yet (rows written before this version, or outputs not yet read back).
ALTER TABLE items ADD COLUMN tokens INTEGER;
