/**
 * What a call reserves of its tenant's `tokens_per_day` when it is admitted, before its real usage
 * is known: its input tokens (an estimate its caller makes: src/session/admission.ts) plus its
 * output bound, the request's `max_output_tokens` or, when it sets none,
 * `DEFAULT_OUTPUT_RESERVATION`. The tenant gate (tenant-gate.ts) holds it until the call ends and
 * then settles it to the call's real usage; what a call uses beyond it is the only way a day's
 * tokens pass the budget (docs/tenancy.md "Limits under concurrency").
 */

/**
 * Output tokens reserved for a turn whose request sets no `max_output_tokens`: 4,096, a common
 * ceiling of a reply without reasoning (a reasoning model's turn may use more; its excess is
 * counted when it ends, and is what the bound allows for).
 */
export const DEFAULT_OUTPUT_RESERVATION = 4_096;

/**
 * Tokens a call reserves.
 * @param inputTokens the caller's estimate of the call's input tokens.
 * @param maxOutputTokens its output bound; null or undefined: none was set (the default applies);
 *   0: it generates nothing.
 */
export function turnTokenEstimate(inputTokens: number, maxOutputTokens: number | null | undefined): number {
  return Math.max(0, Math.ceil(inputTokens)) + Math.max(0, maxOutputTokens ?? DEFAULT_OUTPUT_RESERVATION);
}
