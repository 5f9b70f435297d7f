/**
 * Builds Responses API `Response` objects (spec §3.3) and usage blocks from a request body.
 * `WireResponse` is the SDK's `Response` minus `output_text`, which the SDK adds client-side.
 * Invariant: every Response object has every field the Open Responses `ResponseResource` requires
 * (https://www.openresponses.org/reference): `completed_at` and `usage` (null until the end),
 * `presence_penalty` / `frequency_penalty` (0 unless set), `top_logprobs`, `max_tool_calls`,
 * `safety_identifier`, and function tools with `description`, `parameters` and `strict` (null when
 * the request left them out).
 */
import type { Response, ResponseUsage } from "openai/resources/responses/responses";
import type { JsonObject } from "./json.ts";

/**
 * A Response object as sent on the wire: no SDK-computed `output_text`, plus `store`, which
 * OpenAI echoes but the SDK type lacks.
 */
export type WireResponse = Omit<Response, "output_text" | "usage"> & {
  store?: boolean;
  /** Null until the response ends (the Open Responses spec requires the field on every event). */
  usage: ResponseUsage | null;
  /** Echoed sampling penalties; the SDK's `Response` type lacks them. */
  presence_penalty: number;
  frequency_penalty: number;
};

/** Usage block: `cached` ⊆ `input` tokens; `reasoning` ⊆ `output` tokens (default 0). */
export function makeUsage(
  inputTokens: number,
  cachedTokens: number,
  outputTokens: number,
  reasoningTokens = 0,
): ResponseUsage {
  return {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: cachedTokens, cache_write_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens: inputTokens + outputTokens,
  };
}

function str(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

function num(value: unknown): number | null {
  return typeof value === "number" ? value : null;
}

/** A tool as echoed: a function tool gets `description`, `parameters` and `strict` (null if absent). */
function echoedTool(tool: unknown): unknown {
  if (typeof tool !== "object" || tool === null || (tool as { type?: unknown }).type !== "function")
    return tool;
  return { description: null, parameters: null, strict: null, ...tool };
}

/**
 * The initial (`in_progress`, empty output, no usage) Response for request `body`, echoing
 * the request settings like OpenAI does. `created_at` is unix seconds.
 */
export function initialResponse(id: string, body: JsonObject, model: string): WireResponse {
  const response: WireResponse = {
    id,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status: "in_progress",
    access_programs: null,
    background: false,
    completed_at: null,
    error: null,
    incomplete_details: null,
    instructions: (str(body.instructions) ?? null) as WireResponse["instructions"],
    max_output_tokens: num(body.max_output_tokens),
    max_tool_calls: num(body.max_tool_calls),
    metadata: (body.metadata ?? {}) as WireResponse["metadata"],
    model,
    output: [],
    parallel_tool_calls: body.parallel_tool_calls !== false,
    presence_penalty: num(body.presence_penalty) ?? 0,
    frequency_penalty: num(body.frequency_penalty) ?? 0,
    previous_response_id: str(body.previous_response_id),
    prompt_cache_key: str(body.prompt_cache_key),
    reasoning: { effort: null, summary: null },
    safety_identifier: str(body.safety_identifier),
    service_tier: "default",
    store: body.store !== false,
    temperature: num(body.temperature) ?? 1,
    text: (body.text ?? { format: { type: "text" } }) as WireResponse["text"] & object,
    tool_choice: (body.tool_choice ?? "auto") as WireResponse["tool_choice"],
    tools: (Array.isArray(body.tools) ? body.tools.map(echoedTool) : []) as WireResponse["tools"],
    top_logprobs: num(body.top_logprobs) ?? 0,
    top_p: num(body.top_p) ?? 1,
    truncation: body.truncation === "auto" ? "auto" : "disabled",
    usage: null,
  };
  if (typeof body.user === "string") response.user = body.user;
  return response;
}
