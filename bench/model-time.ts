/**
 * The simulated model's speed in each benchmark profile (simulator/timing.ts: time to first event
 * = overhead + prefill × uncached input tokens; output decoded at a fixed rate). One simulator
 * runs per setting that a run uses.
 * - "zero": no model time at all, so a loop measures only transport and gateway overhead;
 * - "fast": the simulator's defaults (5 ms, 0.05 ms per uncached token, 1,000 tokens/s) — a model
 *   much faster than any real one, so transport differences dominate;
 * - "real": closer to a hosted model: 400 ms to the first event plus prefill of the uncached
 *   tokens at 0.1 ms each (10,000 tokens/s), then 100 output tokens/s. These are assumptions in
 *   the range of published time-to-first-token and output-speed figures for current hosted models,
 *   not measurements of one. More model time shrinks every ratio toward 1 (it is the same for
 *   every scenario), so this setting is the conservative one for a speed claim.
 */
import type { TimingModel } from "../simulator/timing.ts";
import { DEFAULT_TIMING } from "../simulator/timing.ts";

/** Model-time setting ids. */
export const MODEL_TIME_IDS = ["zero", "fast", "real"] as const;
/** One of `MODEL_TIME_IDS`. */
export type ModelTimeId = (typeof MODEL_TIME_IDS)[number];

/** The simulator timing of each setting. */
export const MODEL_TIMES: Record<ModelTimeId, TimingModel> = {
  zero: { firstTokenOverheadMs: 0, prefillMsPerToken: 0, decodeTokensPerSecond: 0 },
  fast: { ...DEFAULT_TIMING },
  real: { firstTokenOverheadMs: 400, prefillMsPerToken: 0.1, decodeTokensPerSecond: 100 },
};

/** One line for people, e.g. "400 ms + 0.1 ms/uncached token to first event, 100 tokens/s". */
export function describeModelTime(id: ModelTimeId): string {
  const t = MODEL_TIMES[id];
  if (t.firstTokenOverheadMs === 0 && t.prefillMsPerToken === 0 && t.decodeTokensPerSecond === 0) {
    return "zero model time (first event and every delta at once)";
  }
  return (
    `${t.firstTokenOverheadMs} ms + ${t.prefillMsPerToken} ms per uncached input token to the first event, ` +
    `${t.decodeTokensPerSecond} output tokens/s`
  );
}
