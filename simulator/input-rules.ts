/**
 * Shape rules of a Responses `input` that OpenAI enforces before generating, with its errors
 * (all 400 `invalid_request_error`). Applied when the simulator is strict (the default).
 * - Nothing to answer: no `input` (or an empty array) and no `previous_response_id` is rejected
 *   even when `instructions` are set — https://github.com/pydantic/pydantic-ai/pull/3470. The
 *   wording is OpenAI's generic one for required parameters and empty arrays, as recorded from
 *   api.openai.com for `messages` (https://github.com/envoyproxy/ai-gateway/blob/main/internal/testing/fakeopenai/cassettes/chat-no-messages.yaml).
 *   A WebSocket `generate: false` warm-up is exempt: it prepares state and answers nothing
 *   (https://developers.openai.com/api/docs/guides/websocket-mode).
 * - An assistant `message` carries only `output_text` / `refusal` parts: `Invalid value:
 *   'input_text'. Supported values are: 'output_text' and 'refusal'.` —
 *   https://github.com/jamesrochabrun/SwiftOpenAI/issues/136.
 * - `max_output_tokens` is at least 16 (API reference: "minimum 16") — `Invalid
 *   'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 10
 *   instead.` (code `integer_below_min_value`; OpenAI's wording for a minimum, as recorded for
 *   `max_tokens`: https://github.com/envoyproxy/ai-gateway/blob/main/internal/testing/fakeopenai/cassettes/edge-bad-request.yaml).
 * - Required fields of the items the API reference defines (`function_call`: call_id, name,
 *   arguments; `function_call_output`: call_id, output; `reasoning`: summary; `message`: role,
 *   content) → `Missing required parameter: 'input[3].call_id'.` (code
 *   `missing_required_parameter`), and roles outside the enum → `invalid_value` —
 *   https://platform.openai.com/docs/api-reference/responses/create (input items).
 */
import { invalidRequest } from "./errors.ts";
import { isJsonObject, type JsonObject } from "./json.ts";

const ROLES = ["assistant", "system", "developer", "user"];
const ASSISTANT_PARTS = ["output_text", "refusal"];
const REQUIRED: Record<string, string[]> = {
  message: ["role", "content"],
  function_call: ["call_id", "name", "arguments"],
  function_call_output: ["call_id", "output"],
  custom_tool_call: ["call_id", "name", "input"],
  custom_tool_call_output: ["call_id", "output"],
  reasoning: ["summary"],
};

/** `'a', 'b', and 'c'` — OpenAI's list of supported values. */
function supported(values: readonly string[]): string {
  const quoted = values.map((v) => `'${v}'`);
  if (quoted.length <= 2) return quoted.join(" and ");
  return `${quoted.slice(0, -1).join(", ")}, and ${quoted.at(-1)}`;
}

function invalidValue(value: unknown, values: readonly string[], param: string) {
  return invalidRequest(
    `Invalid value: '${String(value)}'. Supported values are: ${supported(values)}.`,
    param,
    "invalid_value",
  );
}

/**
 * Rejects a request with nothing to answer.
 * @param input the request's `input` as sent (string, array, or absent).
 * @param continues whether it names a `previous_response_id`.
 * @param generate false for a WebSocket warm-up (exempt).
 */
export function validateInputPresence(input: unknown, continues: boolean, generate: boolean): void {
  if (continues || !generate) return;
  if (input === undefined || input === null) {
    throw invalidRequest("Missing required parameter: 'input'.", "input", "missing_required_parameter");
  }
  if (Array.isArray(input) && input.length === 0) {
    throw invalidRequest(
      "Invalid 'input': empty array. Expected an array with minimum length 1, but got an empty array instead.",
      "input",
      "empty_array",
    );
  }
}

/** Checks each input item (already normalized: role-only items have `type: "message"`). */
export function validateInputItems(items: readonly JsonObject[]): void {
  items.forEach((item, i) => {
    const type = typeof item.type === "string" ? item.type : "";
    for (const field of REQUIRED[type] ?? []) {
      if (item[field] === undefined || item[field] === null) {
        throw invalidRequest(
          `Missing required parameter: 'input[${i}].${field}'.`,
          `input[${i}].${field}`,
          "missing_required_parameter",
        );
      }
    }
    if (type !== "message") return;
    if (!ROLES.includes(String(item.role))) throw invalidValue(item.role, ROLES, `input[${i}].role`);
    if (item.role !== "assistant" || !Array.isArray(item.content)) return;
    item.content.forEach((part: unknown, j) => {
      const partType = isJsonObject(part) ? part.type : undefined;
      if (!ASSISTANT_PARTS.includes(String(partType))) {
        throw invalidValue(partType, ASSISTANT_PARTS, `input[${i}].content[${j}]`);
      }
    });
  });
}

/** Minimum `max_output_tokens` of the Responses API. */
export const MIN_OUTPUT_TOKENS = 16;

/** Checks the numeric settings OpenAI bounds (`max_output_tokens` ≥ 16). */
export function validateSettings(body: JsonObject): void {
  const max = body.max_output_tokens;
  if (typeof max === "number" && max < MIN_OUTPUT_TOKENS) {
    throw invalidRequest(
      `Invalid 'max_output_tokens': integer below minimum value. Expected a value >= ${MIN_OUTPUT_TOKENS}, but got ${max} instead.`,
      "max_output_tokens",
      "integer_below_min_value",
    );
  }
}
