/**
 * Paces a timed event sequence onto a transport: waits until each step is due (relative to
 * the request start) and hands it to a writer, stopping early on abort or at a cut index
 * (simulated mid-stream failure).
 */
import type { EventStep } from "./events.ts";
import { waitUntil } from "./timing.ts";

/**
 * Sends `steps[0..stopBefore)` through `write`, each at `startMs + step.atMs`.
 * Returns true when every requested step was written, false when `signal` aborted first.
 * `write` may return a promise (awaited, e.g. for backpressure). `beforeLast`, when given, is
 * awaited before the last step (the terminal event) is written (the `hold=` directive).
 */
export async function runSteps(
  steps: EventStep[],
  startMs: number,
  signal: AbortSignal,
  write: (step: EventStep) => void | Promise<void>,
  stopBefore = steps.length,
  beforeLast?: () => Promise<void>,
): Promise<boolean> {
  for (let i = 0; i < stopBefore; i++) {
    const step = steps[i];
    if (!step) break;
    if (beforeLast && i === steps.length - 1) await beforeLast();
    await waitUntil(startMs, step.atMs, signal);
    if (signal.aborted) return false;
    await write(step);
  }
  return !signal.aborted;
}
