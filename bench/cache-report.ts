/**
 * The prompt cache of a scenario's loops (issue #26): per turn, the share of its input tokens read
 * from cache, from the usage the client received (metrics.ts `TurnCache`: the Response's
 * `input_tokens_details.cached_tokens` through Deltagate, the provider's `cache_read_input_tokens`
 * / `cachedContentTokenCount` for a direct client).
 * Invariant: pure (no I/O, no clock); a scenario whose turns carry no cache figures gets null, so
 * "not reported" is never shown as 0 %.
 */
import { type LoopSample, median } from "./metrics.ts";

/** One scenario's cache shares (0–1). */
export interface CacheSummary {
  /** Turn i's share (index 0 = turn 1), median over the loops that report it. */
  perTurn: Array<number | null>;
  /** From turn 2 on: the lowest share of any turn of any loop, and the median share. */
  fromTurn2: { min: number; median: number; turns: number } | null;
  /** From turn 2 on: every cached token over every input token, summed over loops. */
  tokensFromTurn2: { cached: number; input: number; share: number } | null;
  /**
   * From turn 2 on: the most a prompt cache could have read, the previous request's input tokens
   * over this one's (a turn's new items — the tool outputs — and the previous answer were never
   * sent before, so no cache can hold them): lowest and median turn.
   */
  boundFromTurn2: { min: number; median: number } | null;
  /**
   * From turn 2 on: the cached tokens over the previous request's input tokens — how much of what
   * the previous turn sent was read back (1 = all of it): lowest and median turn.
   */
  reuseFromTurn2: { min: number; median: number } | null;
}

/** The share of one turn, or null when it reports no cache or no input. */
function shareOf(turn: LoopSample["turns"][number]): number | null {
  const cache = turn.cache;
  if (!cache || cache.inputTokens <= 0) return null;
  return cache.cachedTokens / cache.inputTokens;
}

/** The cache summary of `samples` (one per measured loop), or null when no turn reports one. */
export function cacheSummary(samples: LoopSample[]): CacheSummary | null {
  if (!samples.some((s) => s.turns.some((t) => shareOf(t) !== null))) return null;
  const length = Math.max(...samples.map((s) => s.turns.length));
  const perTurn = Array.from({ length }, (_, i) => {
    const shares = samples.flatMap((s) => {
      const turn = s.turns[i];
      const share = turn ? shareOf(turn) : null;
      return share === null ? [] : [share];
    });
    return shares.length > 0 ? median(shares) : null;
  });
  const later = samples.flatMap((s) => s.turns.slice(1));
  const shares = later.flatMap((t) => {
    const share = shareOf(t);
    return share === null ? [] : [share];
  });
  const cached = later.reduce((sum, t) => sum + (t.cache?.cachedTokens ?? 0), 0);
  const input = later.reduce((sum, t) => sum + (t.cache?.inputTokens ?? 0), 0);
  const bound: number[] = [];
  const reuse: number[] = [];
  for (const s of samples) {
    s.turns.forEach((turn, i) => {
      const before = i > 0 ? s.turns[i - 1]?.cache : null;
      const now = turn.cache;
      if (!before || !now || before.inputTokens <= 0 || now.inputTokens <= 0) return;
      bound.push(Math.min(1, before.inputTokens / now.inputTokens));
      reuse.push(now.cachedTokens / before.inputTokens);
    });
  }
  const range = (values: number[]) =>
    values.length > 0 ? { min: Math.min(...values), median: median(values) } : null;
  return {
    perTurn,
    fromTurn2:
      shares.length > 0 ? { min: Math.min(...shares), median: median(shares), turns: shares.length } : null,
    tokensFromTurn2: input > 0 ? { cached, input, share: cached / input } : null,
    boundFromTurn2: range(bound),
    reuseFromTurn2: range(reuse),
  };
}
