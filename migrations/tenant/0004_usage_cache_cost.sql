-- Version 0004 (src/tenancy/tenant-store.ts): the ledger counts prompt-cache tokens and prices
-- turns (src/context/turn-cost.ts). cached_tokens / cache_write_tokens: input tokens read from /
-- written to the provider's prompt cache (both part of input_tokens). cost_nano_usd: the sum of
-- the row's priced turns' costs in nano-dollars (1e-9 USD, integers so sums are exact), NULL while
-- none of its turns was priced (a model without a price has no cost, never 0); priced_turns: how
-- many of its turns that sum covers. Rows written before this version count 0 and NULL.
ALTER TABLE usage ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage ADD COLUMN cost_nano_usd INTEGER;
ALTER TABLE usage ADD COLUMN priced_turns INTEGER NOT NULL DEFAULT 0;
