/**
 * Builds the Response object from a stored record and its output items. Owns the
 * defaults OpenAI reports for settings the request left out, so every event and every HTTP read
 * shows the same object.
 * Also owns the client's view of stored items (`clientItem`): a reasoning item's
 * `encrypted_content` is kept in storage (to send it back upstream) but shown only to a client
 * whose request asked for it with `include: ["reasoning.encrypted_content"]` ("Includes an
 * encrypted version of reasoning tokens in reasoning item outputs" —
 * https://platform.openai.com/docs/api-reference/responses/create#responses_create-include), and
 * Deltagate's origin mark (src/upstream/encrypted-reasoning.ts) is never shown.
 * Invariants: the object has every field the `openai` SDK's `Response` type declares as required
 * (test/support/sdk-response-fields.ts checks it against the SDK type) and every field the Open
 * Responses `ResponseResource` requires (`presence_penalty`, `frequency_penalty`, `top_logprobs`,
 * `max_tool_calls`, `safety_identifier`, …; a function tool with `description`, `parameters` and
 * `strict`, each null when the request left it out); every item a client sees (events, Response
 * objects, `input_items`) went through `clientItem`; every listed input item has the `status`
 * OpenAI's `ResponseItem` requires (`listedItems`).
 * Sources: https://platform.openai.com/docs/api-reference/responses/object,
 *   https://www.openresponses.org/reference (ResponseResource, FunctionTool)
 */

import type { StoredItem } from "../protocol/items.ts";
import type { Json } from "../protocol/json.ts";
import type { ResponseRecord } from "../store/conversation-store.ts";
import { asksEncryptedReasoning, ORIGIN_FIELD } from "../upstream/encrypted-reasoning.ts";

/** A Response object as sent on the wire. */
export interface ResponseObject {
  id: string;
  object: "response";
  status: string;
  output: StoredItem[];
  [field: string]: unknown;
}

/**
 * Zero usage, reported by responses that ran no inference (`generate: false`), in the shape of
 * the `openai` SDK's `ResponseUsage` (`input_tokens_details.cache_write_tokens` is required).
 */
export const ZERO_USAGE: Json = {
  input_tokens: 0,
  input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
  output_tokens: 0,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 0,
};

const seconds = (ms: number) => Math.floor(ms / 1000);

/**
 * A tool as echoed: a function tool with `description`, `parameters` and `strict` present (null
 * when the request left them out: the upstream's own default applies, which Deltagate cannot
 * know — OpenAI's Responses API enforces strict mode by default, Chat Completions does not);
 * every other tool as sent. What goes upstream is the tool as sent (`forwardedSettings`).
 */
function echoedTool(tool: Json): Json {
  if (typeof tool !== "object" || tool === null || Array.isArray(tool) || tool.type !== "function")
    return tool;
  return { description: null, parameters: null, strict: null, ...tool };
}

/**
 * What a client sees of a stored item (the item itself when nothing is hidden).
 * @param include the `include` of the request that created the response the item is shown for.
 */
export function clientItem<T extends StoredItem>(item: T, include: Json | undefined): T {
  if (item.type !== "reasoning" && item.type !== "compaction") return item;
  const fields = item as Record<string, unknown>;
  // A compaction item's encrypted content is the item itself: always shown.
  const hides =
    item.type === "reasoning" && "encrypted_content" in fields && !asksEncryptedReasoning(include);
  if (!hides && !(ORIGIN_FIELD in fields)) return item;
  const { [ORIGIN_FIELD]: _origin, ...shown } = fields;
  if (hides) delete shown.encrypted_content;
  return shown as T;
}

/** `clientItem` over a list. */
export function clientItems<T extends StoredItem>(items: readonly T[], include: Json | undefined): T[] {
  return items.map((item) => clientItem(item, include));
}

/**
 * The item types whose listed form (`GET /v1/responses/{id}/input_items`, the `openai` SDK's
 * `ResponseItem`) requires a `status` — a call's and a tool output's
 * (`ResponseFunctionToolCallOutputItem` & co.), and an assistant message's
 * (`ResponseOutputMessage`) — which a client's input item may leave out.
 */
const LISTED_WITH_STATUS: ReadonlySet<string> = new Set([
  "function_call",
  "function_call_output",
  "custom_tool_call",
  "custom_tool_call_output",
]);

/**
 * Items as `input_items` lists them: each through `clientItem`, and one of `LISTED_WITH_STATUS`
 * without a `status` gets `"completed"` (an input item is complete when it is sent), as OpenAI
 * lists it.
 */
export function listedItems<T extends StoredItem>(items: readonly T[], include: Json | undefined): T[] {
  return items.map((item) => {
    const shown = clientItem(item, include);
    if ("status" in shown) return shown;
    // A user, system or developer message's `status` is optional (`ResponseInputMessageItem`).
    const required =
      LISTED_WITH_STATUS.has(shown.type) || (shown.type === "message" && shown.role === "assistant");
    if (!required) return shown;
    return { ...shown, status: "completed" };
  });
}

/** The fields of a stream event as the client sees them (its `item`, if any, through `clientItem`). */
export function clientEventFields(
  fields: Record<string, unknown>,
  include: Json | undefined,
): Record<string, unknown> {
  const item = fields.item as StoredItem | undefined;
  if (item?.type !== "reasoning" && item?.type !== "compaction") return fields;
  return { ...fields, item: clientItem(item, include) };
}

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
    background: record.background === true,
    // The conversation the turn continued (src/engine/conversation-turns.ts), as OpenAI's `{id}`.
    conversation: record.conversationId ? { id: record.conversationId } : null,
    completed_at: record.completedAt === null ? null : seconds(record.completedAt),
    error: record.error,
    incomplete_details: record.incompleteDetails,
    instructions: s.instructions ?? null,
    max_output_tokens: s.max_output_tokens ?? null,
    max_tool_calls: s.max_tool_calls ?? null,
    metadata: s.metadata ?? {},
    model: record.model,
    output: clientItems(output, s.include),
    parallel_tool_calls: s.parallel_tool_calls ?? true,
    presence_penalty: s.presence_penalty ?? 0,
    frequency_penalty: s.frequency_penalty ?? 0,
    // A matched resend continues its chain without naming it (src/resend/): as the client sent
    // (null, or the warm-up its resend was chained on).
    previous_response_id: record.implicitParent ? (record.namedParentId ?? null) : record.parentId,
    // The template the request named (OpenAI echoes it); absent when none was.
    ...(s.prompt ? { prompt: s.prompt } : {}),
    prompt_cache_key: s.prompt_cache_key ?? null,
    reasoning: s.reasoning ?? { effort: null, summary: null },
    safety_identifier: s.safety_identifier ?? null,
    service_tier: s.service_tier ?? "default",
    store: record.store,
    temperature: s.temperature ?? 1,
    text: s.text ?? { format: { type: "text" } },
    tool_choice: s.tool_choice ?? "auto",
    tools: Array.isArray(s.tools) ? s.tools.map(echoedTool) : [],
    top_logprobs: s.top_logprobs ?? 0,
    top_p: s.top_p ?? 1,
    truncation: s.truncation ?? "disabled",
    usage: record.usage,
    user: s.user ?? null,
    // Only when the request asked for moderation (src/safety/report.ts).
    ...(record.moderation ? { moderation: record.moderation } : {}),
  };
}
