/**
 * What a turn reserves of its tenant's `tokens_per_day` when it is admitted, before its real usage
 * is known: its input tokens (an estimate its caller makes) plus its output bound, the request's
 * `max_output_tokens` or, when it sets none, `DEFAULT_OUTPUT_RESERVATION`. The tenant gate
 * (tenant-gate.ts) holds it until the turn ends and then settles it to the turn's real usage.
 */

/** Output tokens reserved for a turn whose request sets no `max_output_tokens`. */
export const DEFAULT_OUTPUT_RESERVATION = 4_096;

/**
 * Tokens a turn reserves.
 * @param inputTokens the caller's estimate of the turn's input tokens (an upper bound keeps the
 *   budget exact: a token covers at least one byte, so a request's UTF-8 bytes bound its own input).
 */
export function turnTokenEstimate(inputTokens: number, maxOutputTokens: number | null | undefined): number {
  return Math.max(0, Math.ceil(inputTokens)) + (maxOutputTokens ?? DEFAULT_OUTPUT_RESERVATION);
}
