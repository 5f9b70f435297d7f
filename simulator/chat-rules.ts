/**
 * Request rules of `POST /v1/chat/completions` that OpenAI enforces before generating, with its
 * errors (400 `invalid_request_error`). Owns the validation of `messages`, `tools`,
 * `tool_choice` and `parallel_tool_calls`; chat-convert.ts only converts a valid request.
 * Always on (OpenAI's rules):
 * - `messages` required and non-empty — `Invalid 'messages': empty array. Expected an array
 *   with minimum length 1, but got an empty array instead.` (code `empty_array`), recorded from
 *   api.openai.com: https://github.com/envoyproxy/ai-gateway/blob/main/internal/testing/fakeopenai/cassettes/chat-no-messages.yaml;
 * - a `tool` message answers a `tool_calls` id of the assistant message right before it (only
 *   other tool messages between) — `Invalid parameter: messages with role 'tool' must be a
 *   response to a preceeding message with 'tool_calls'.` (param `messages.[i].role`), and every
 *   tool call is answered before the next other message — `An assistant message with
 *   'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The
 *   following tool_call_ids did not have response messages: …` —
 *   https://platform.openai.com/docs/guides/function-calling,
 *   https://github.com/BerriAI/litellm/issues/10083 (body).
 * Strict only (the default):
 * - images only in user messages — `Invalid 'messages[3]'. Image URLs are only allowed for
 *   messages with role 'user', but this message with role 'tool' contains an image URL.` (code
 *   `invalid_value`); an image part's `detail`, when given, is `auto`, `low`, `high` or `original` —
 *   https://platform.openai.com/docs/api-reference/chat/create (`image_url.detail`);
 * - an assistant message without `tool_calls` has content — `Invalid value for 'content':
 *   expected a string, got null.` (param `messages.[i].content`);
 * - roles are `system`, `developer`, `user`, `assistant`, `tool` or `function` (`invalid_value`);
 * - no empty `tool_calls` array on an assistant message (OpenAI tolerates it, DeepSeek answers
 *   `Invalid 'messages[53].tool_calls': empty array. …`) and no empty `tools` array (OpenAI:
 *   `Invalid 'tools': empty array. …`); `tool_choice` / `parallel_tool_calls` only with `tools`
 *   (`Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are
 *   specified.`; the same error bodies are quoted in public client code working around them) —
 *   https://platform.openai.com/docs/api-reference/chat/create (`tools`, `tool_choice`).
 */
import { invalidRequest } from "./errors.ts";
import { isJsonObject, type JsonObject } from "./json.ts";

const ROLES = ["system", "assistant", "user", "function", "tool", "developer"];
const DETAILS = ["auto", "low", "high", "original"];

function emptyArray(name: string) {
  return invalidRequest(
    `Invalid '${name}': empty array. Expected an array with minimum length 1, but got an empty array instead.`,
    name,
    "empty_array",
  );
}

function missingToolResponses(pending: Set<string>) {
  return invalidRequest(
    `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...pending].join(", ")}`,
    "messages",
  );
}

function onlyWithTools(name: string) {
  return invalidRequest(
    `Invalid value for '${name}': '${name}' is only allowed when 'tools' are specified.`,
    name,
  );
}

function parts(content: unknown): JsonObject[] {
  return Array.isArray(content) ? content.filter(isJsonObject) : [];
}

/** Checks one message's content parts (strict): images only for users, valid `detail`. */
function validateParts(message: JsonObject, i: number): void {
  parts(message.content).forEach((part, j) => {
    if (part.type !== "image_url") return;
    if (message.role !== "user") {
      throw invalidRequest(
        `Invalid 'messages[${i}]'. Image URLs are only allowed for messages with role 'user', but this message with role '${String(message.role)}' contains an image URL.`,
        `messages[${i}]`,
        "invalid_value",
      );
    }
    const image = isJsonObject(part.image_url) ? part.image_url : {};
    if (typeof image.url !== "string") {
      throw invalidRequest(
        `Missing required parameter: 'messages[${i}].content[${j}].image_url.url'.`,
        `messages[${i}].content[${j}].image_url.url`,
        "missing_required_parameter",
      );
    }
    if (image.detail !== undefined && !DETAILS.includes(String(image.detail))) {
      throw invalidRequest(
        `Invalid value: '${String(image.detail)}'. Supported values are: 'auto', 'low', 'high', and 'original'.`,
        `messages[${i}].content[${j}].image_url.detail`,
        "invalid_value",
      );
    }
  });
}

/**
 * Validates a chat completion request body.
 * @param strict apply the strict-only rules too (see the module header).
 * @throws {SimError} 400 on the first violation.
 */
export function validateChatRequest(body: JsonObject, strict: boolean): void {
  const { messages } = body;
  if (messages === undefined || messages === null) {
    throw invalidRequest("Missing required parameter: 'messages'.", "messages", "missing_required_parameter");
  }
  if (!Array.isArray(messages)) {
    throw invalidRequest("Invalid type for 'messages': expected an array.", "messages", "invalid_type");
  }
  if (messages.length === 0) throw emptyArray("messages");
  const pending = new Set<string>();
  messages.forEach((m: unknown, i) => {
    if (!isJsonObject(m) || typeof m.role !== "string") {
      throw invalidRequest(`Invalid value for 'messages[${i}]'.`, `messages[${i}]`);
    }
    if (strict && !ROLES.includes(m.role)) {
      throw invalidRequest(
        `Invalid value: '${m.role}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`,
        `messages[${i}].role`,
        "invalid_value",
      );
    }
    if (m.role === "tool") {
      const id = typeof m.tool_call_id === "string" ? m.tool_call_id : "";
      if (!pending.delete(id)) {
        throw invalidRequest(
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          `messages.[${i}].role`,
        );
      }
    } else if (pending.size > 0) {
      throw missingToolResponses(pending);
    }
    if (strict) validateParts(m, i);
    if (m.role !== "assistant") return;
    const calls = Array.isArray(m.tool_calls) ? m.tool_calls : null;
    if (strict && calls?.length === 0) throw emptyArray(`messages[${i}].tool_calls`);
    if (strict && !calls && (m.content === null || m.content === undefined)) {
      throw invalidRequest(
        "Invalid value for 'content': expected a string, got null.",
        `messages.[${i}].content`,
      );
    }
    for (const call of calls ?? []) {
      if (isJsonObject(call) && typeof call.id === "string") pending.add(call.id);
    }
  });
  if (pending.size > 0) throw missingToolResponses(pending);
  if (!strict) return;
  const hasTools = Array.isArray(body.tools) && body.tools.length > 0;
  if (Array.isArray(body.tools) && body.tools.length === 0) throw emptyArray("tools");
  if (!hasTools && body.tool_choice !== undefined && body.tool_choice !== null) {
    throw onlyWithTools("tool_choice");
  }
  if (!hasTools && body.parallel_tool_calls !== undefined && body.parallel_tool_calls !== null) {
    throw onlyWithTools("parallel_tool_calls");
  }
}
