/**
 * The windows the limits count in: the epoch minute (turns_per_minute, a fixed window) and the
 * UTC day (tokens_per_day, the ledger's day), with the seconds until each ends (`retry-after`).
 */

/** The epoch minute of `ms`. */
export function minuteOf(ms: number): number {
  return Math.floor(ms / 60_000);
}

/** The UTC day of `ms`, `YYYY-MM-DD`. */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Whole seconds (≥ 1) until the minute of `ms` ends. */
export function secondsToNextMinute(ms: number): number {
  return Math.max(1, Math.ceil(((minuteOf(ms) + 1) * 60_000 - ms) / 1000));
}

/** Whole seconds (≥ 1) until the UTC day of `ms` ends. */
export function secondsToNextDay(ms: number): number {
  const next = Date.UTC(
    new Date(ms).getUTCFullYear(),
    new Date(ms).getUTCMonth(),
    new Date(ms).getUTCDate() + 1,
  );
  return Math.max(1, Math.ceil((next - ms) / 1000));
}
