/**
 * Builds the Response object from a stored record and its output items. Owns the
 * defaults OpenAI reports for settings the request left out, so every event and every HTTP read
 * shows the same object.
 * Invariant: the object has every field the `openai` SDK's `Response` type declares as required
 * (test/support/sdk-response-fields.ts checks it against the SDK type).
 * Source: https://platform.openai.com/docs/api-reference/responses/object
 */

import type { StoredItem } from "../protocol/items.ts";
import type { Json } from "../protocol/json.ts";
import type { ResponseRecord } from "../store/conversation-store.ts";

/** A Response object as sent on the wire. */
export interface ResponseObject {
  id: string;
  object: "response";
  status: string;
  output: StoredItem[];
  [field: string]: unknown;
}

/** Zero usage, reported by responses that ran no inference (`generate: false`). */
export const ZERO_USAGE: Json = {
  input_tokens: 0,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 0,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 0,
};

const seconds = (ms: number) => Math.floor(ms / 1000);

/**
 * The Response object for `record` with `output` (pass `[]` while in progress).
 * Times are unix seconds, as OpenAI reports them.
 */
export function responseObject(record: ResponseRecord, output: StoredItem[]): ResponseObject {
  const s = record.settings;
  return {
    id: record.id,
    object: "response",
    // No access program applies (OpenAI's value for an implicit Standard program).
    access_programs: null,
    created_at: seconds(record.createdAt),
    status: record.status,
    background: false,
    completed_at: record.completedAt === null ? null : seconds(record.completedAt),
    error: record.error,
    incomplete_details: record.incompleteDetails,
    instructions: s.instructions ?? null,
    max_output_tokens: s.max_output_tokens ?? null,
    max_tool_calls: s.max_tool_calls ?? null,
    metadata: s.metadata ?? {},
    model: record.model,
    output,
    parallel_tool_calls: s.parallel_tool_calls ?? true,
    previous_response_id: record.parentId,
    prompt_cache_key: s.prompt_cache_key ?? null,
    reasoning: s.reasoning ?? { effort: null, summary: null },
    safety_identifier: s.safety_identifier ?? null,
    service_tier: s.service_tier ?? "default",
    store: record.store,
    temperature: s.temperature ?? 1,
    text: s.text ?? { format: { type: "text" } },
    tool_choice: s.tool_choice ?? "auto",
    tools: s.tools ?? [],
    top_logprobs: s.top_logprobs ?? 0,
    top_p: s.top_p ?? 1,
    truncation: s.truncation ?? "disabled",
    usage: record.usage,
    user: s.user ?? null,
    // Only when the request asked for moderation (src/safety/report.ts).
    ...(record.moderation ? { moderation: record.moderation } : {}),
  };
}
