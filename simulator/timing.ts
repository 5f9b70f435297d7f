/**
 * The simulator's latency model: time to first event = overhead + prefill per uncached input
 * token (+ directive delay); output is decoded at a fixed tokens-per-second rate. Also owns the
 * abortable sleep the transports pace their writes with.
 */
import { setTimeout as sleepTimer } from "node:timers/promises";

/** Latency parameters (all non-negative). */
export interface TimingModel {
  /** Fixed time before the first event, ms. */
  firstTokenOverheadMs: number;
  /** Prefill cost per uncached input token, ms. */
  prefillMsPerToken: number;
  /** Decode speed, output tokens per second (0 or Infinity = no decode delay). */
  decodeTokensPerSecond: number;
}

/** Defaults: 5 ms overhead, 0.05 ms per uncached input token, 1000 output tokens/s. */
export const DEFAULT_TIMING: TimingModel = {
  firstTokenOverheadMs: 5,
  prefillMsPerToken: 0.05,
  decodeTokensPerSecond: 1000,
};

/** Time to first event in ms for `uncachedTokens` uncached input tokens plus `extraDelayMs`. */
export function firstEventDelayMs(model: TimingModel, uncachedTokens: number, extraDelayMs = 0): number {
  return model.firstTokenOverheadMs + model.prefillMsPerToken * uncachedTokens + extraDelayMs;
}

/** Time in ms to decode `tokens` output tokens. */
export function decodeMs(model: TimingModel, tokens: number): number {
  const tps = model.decodeTokensPerSecond;
  return tps > 0 && Number.isFinite(tps) ? (tokens * 1000) / tps : 0;
}

/**
 * Waits until `startMs + offsetMs` (wall clock, ms epoch). Sub-millisecond waits yield to the
 * event loop once (setImmediate) so consecutive writes stay separate. Resolves early (never
 * rejects) when `signal` aborts.
 */
export async function waitUntil(startMs: number, offsetMs: number, signal: AbortSignal): Promise<void> {
  const remaining = startMs + offsetMs - Date.now();
  if (signal.aborted) return;
  if (remaining < 1) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    return;
  }
  try {
    await sleepTimer(remaining, undefined, { signal });
  } catch {
    // aborted: the caller checks signal.aborted
  }
}
