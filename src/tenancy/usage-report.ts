/**
 * The ledger as tenants and operators read it: rows by UTC day and model, turns by status, token
 * sums. Owns the `since` parameter (a UTC day, default 30 days back) and the response shape of
 * `GET /v1/usage` and `GET /admin/v1/usage`.
 */
import { z } from "zod";
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
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

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
  const buckets = new Map<string, UsageBucket>();
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
        output_tokens: 0,
        total_tokens: 0,
      };
      buckets.set(id, bucket);
    }
    bucket.turns += row.turns;
    bucket.statuses[row.status] = (bucket.statuses[row.status] ?? 0) + row.turns;
    bucket.input_tokens += row.input_tokens;
    bucket.output_tokens += row.output_tokens;
    bucket.total_tokens += row.input_tokens + row.output_tokens;
  }
  return [...buckets.values()];
}
