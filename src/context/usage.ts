/**
 * Usage reporting when an upstream gives none (some Chat Completions servers, streams without
 * `include_usage`): the terminal event's `response.usage` is filled from Deltagate's own token
 * counts, and a response the upstream stopped reporting on (failed mid-stream, cancelled) is
 * counted on demand (`UpstreamStream.usage`). Owns that fallback. Invariants: an upstream's own
 * usage is never replaced; the tokenizer is loaded only when a usage is actually missing.
 * Source: https://platform.openai.com/docs/api-reference/responses/object#usage
 */

import type { Item } from "../protocol/items.ts";
import { isRecord, type Json } from "../protocol/json.ts";
import { FINISHED_EVENT_TYPES } from "../protocol/server-events.ts";
import { mapEvents } from "../upstream/map-events.ts";
import type { UpstreamEvent, UpstreamStream } from "../upstream/upstream.ts";
import { itemTokens } from "./item-tokens.ts";
import type { CountTokens } from "./tokenizer.ts";

/** Exact counts of what was sent, made on demand. */
export interface ExactCounts {
  /** The tokenizer, for the output items. */
  count: CountTokens;
  /** Tokens of what was sent: instructions, tools and the context's items. */
  inputTokens: number;
}

/** What `reportedHistoryTokens` reads of a response. */
export interface ReportedResponse {
  status: string;
  usage: Json | null;
  settings: Record<string, Json>;
}

/**
 * The size of history(R) as the upstream reported it when it ran R: R's `input_tokens` (its
 * instructions, tools and whole context, which the upstream counts whether cached or not) plus its
 * `output_tokens`. Null when that does not measure history(R): R did not finish (its usage, if
 * any, is partial), ran no inference (`generate: false`: zero usage), or was allowed
 * `truncation: "auto"` (the upstream may have been sent less than history(R) holds).
 * Source: https://platform.openai.com/docs/api-reference/responses/object#responses/object-usage
 */
export function reportedHistoryTokens(record: ReportedResponse | null): number | null {
  if (!record || (record.status !== "completed" && record.status !== "incomplete")) return null;
  if (record.settings.truncation === "auto") return null;
  const usage = record.usage;
  if (typeof usage !== "object" || usage === null || Array.isArray(usage)) return null;
  const { input_tokens: input, output_tokens: output } = usage;
  if (typeof input !== "number" || typeof output !== "number") return null;
  if (!Number.isFinite(input) || !Number.isFinite(output) || input <= 0 || output < 0) return null;
  return input + output;
}

/** A Responses `usage` object from token counts (nothing cached or written to a cache, no reasoning tokens known). */
function usageFromCounts(inputTokens: number, outputTokens: number): Json {
  return {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: inputTokens + outputTokens,
  };
}

function isItem(value: unknown): value is Item {
  return isRecord(value) && typeof value.type === "string";
}

/**
 * Wraps an upstream stream so its terminal event carries a usage.
 * @param exact counts what was sent (called only when a terminal event lacks usage). Output
 *   tokens are those of the terminal `response.output`, else of the `response.output_item.done`
 *   items seen.
 */
export async function withUsageFallback(
  stream: UpstreamStream,
  exact: () => Promise<ExactCounts>,
): Promise<UpstreamStream> {
  const seen: Item[] = [];
  // Synchronous for every event but a finished one without a usage (the only one counted).
  const fill = (event: UpstreamEvent): UpstreamEvent | Promise<UpstreamEvent> => {
    if (event.type === "response.output_item.done" && isItem(event.item)) seen.push(event.item);
    if (!FINISHED_EVENT_TYPES.has(event.type)) return event;
    const response = isRecord(event.response) ? event.response : {};
    if (response.usage !== undefined && response.usage !== null) return event;
    return counted(event, response);
  };
  const counted = async (event: UpstreamEvent, response: { [field: string]: Json | undefined }) => {
    const { count, inputTokens } = await exact();
    const output = Array.isArray(response.output) ? (response.output as unknown[]).filter(isItem) : seen;
    let outputTokens = 0;
    for (const item of output) outputTokens += itemTokens(item, count);
    return { ...event, response: { ...response, usage: usageFromCounts(inputTokens, outputTokens) } };
  };
  return {
    first: await fill(stream.first),
    rest: mapEvents(stream.rest, fill),
    usage: async (output) => {
      const { count, inputTokens } = await exact();
      let outputTokens = 0;
      for (const item of output) outputTokens += itemTokens(item, count);
      return usageFromCounts(inputTokens, outputTokens);
    },
  };
}
