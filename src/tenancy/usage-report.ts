/**
 * The ledger as tenants and operators read it: rows by UTC day and model, turns by status, token
 * sums (cached and cache-write tokens apart) and cost, and their total. Owns the `since` parameter
 * (a UTC day, default 30 days back) and the response shape of `GET /v1/usage` and
 * `GET /admin/v1/usage`.
 * Invariant: a cost is summed in nano-dollars (exact) and shown in USD once, at the end; it is null
 * when none of the turns it covers was priced (`PRICES`), never 0, and `priced_turns` says how
 * many of the `turns` it covers (fewer when prices were set part-way or a model has none).
 */
import { z } from "zod";
import { usdOf } from "../context/turn-cost.ts";
import { invalidRequest } from "../protocol/errors.ts";
import { dayOf } from "./clock.ts";
import type { UsageRow } from "./tenant-store.ts";

/** One day and model of a tenant's usage. */
export interface UsageBucket {
  day: string;
  model: string;
  turns: number;
  /** Turns by how they ended: completed, failed, cancelled, incomplete. */
  statuses: Record<string, number>;
  /** All input tokens, `cached_tokens` and `cache_write_tokens` included. */
  input_tokens: number;
  /** Input tokens read from the provider's prompt cache. */
  cached_tokens: number;
  /** Input tokens written to the provider's prompt cache (Anthropic's cache creation). */
  cache_write_tokens: number;
  output_tokens: number;
  total_tokens: number;
  /** USD of the priced turns (src/context/turn-cost.ts); null when none was priced. */
  cost_usd: number | null;
  /** Turns whose model had a price: those `cost_usd` covers. */
  priced_turns: number;
}

/** The sums of every bucket (a `GET /v1/usage` answer's `total`). */
export type UsageTotal = Omit<UsageBucket, "day" | "model" | "statuses">;

/** A bucket being summed: its cost in nano-dollars until it is shown. */
type Summing = Omit<UsageBucket, "cost_usd"> & { cost: number | null };

const DAY = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);

/**
 * The first day to report: `since` (YYYY-MM-DD) or 30 days before `now`.
 * @throws {ApiError} 400 when `since` is not a day.
 */
export function sinceDay(since: string | undefined, now: number): string {
  if (since === undefined || since === "") return dayOf(now - 30 * 86_400_000);
  if (!DAY.safeParse(since).success) throw invalidRequest("'since' must be a UTC day, YYYY-MM-DD.", "since");
  return since;
}

/** Ledger rows (by day, model, status) folded into buckets by day and model. */
export function usageBuckets(rows: readonly UsageRow[]): UsageBucket[] {
  const buckets = new Map<string, Summing>();
  for (const row of rows) {
    const id = `${row.day}\u0000${row.model}`;
    let bucket = buckets.get(id);
    if (!bucket) {
      bucket = {
        day: row.day,
        model: row.model,
        turns: 0,
        statuses: {},
        input_tokens: 0,
        cached_tokens: 0,
        cache_write_tokens: 0,
        output_tokens: 0,
        total_tokens: 0,
        cost: null,
        priced_turns: 0,
      };
      buckets.set(id, bucket);
    }
    bucket.turns += row.turns;
    bucket.statuses[row.status] = (bucket.statuses[row.status] ?? 0) + row.turns;
    add(bucket, row);
  }
  return [...buckets.values()].map(({ cost, ...bucket }) => ({ ...bucket, cost_usd: usdOf(cost) }));
}

/** The total of the ledger rows (the same sums as `usageBuckets`, over every day and model). */
export function usageTotal(rows: readonly UsageRow[]): UsageTotal {
  const total = {
    turns: 0,
    input_tokens: 0,
    cached_tokens: 0,
    cache_write_tokens: 0,
    output_tokens: 0,
    total_tokens: 0,
    cost: null as number | null,
    priced_turns: 0,
  };
  for (const row of rows) {
    total.turns += row.turns;
    add(total, row);
  }
  const { cost, ...sums } = total;
  return { ...sums, cost_usd: usdOf(cost) };
}

type Sums = Pick<
  Summing,
  | "input_tokens"
  | "cached_tokens"
  | "cache_write_tokens"
  | "output_tokens"
  | "total_tokens"
  | "cost"
  | "priced_turns"
>;

function add(sums: Sums, row: UsageRow): void {
  sums.input_tokens += row.input_tokens;
  sums.cached_tokens += row.cached_tokens;
  sums.cache_write_tokens += row.cache_write_tokens;
  sums.output_tokens += row.output_tokens;
  sums.total_tokens += row.input_tokens + row.output_tokens;
  if (row.cost_nano_usd !== null) sums.cost = (sums.cost ?? 0) + row.cost_nano_usd;
  sums.priced_turns += row.priced_turns;
}
