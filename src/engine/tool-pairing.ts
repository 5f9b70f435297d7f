/**
 * Tool-call pairing rules of the Responses API (https://platform.openai.com/docs/guides/function-calling), checked on the full effective
 * context before any upstream call, with OpenAI's messages.
 * Invariant after a successful check: every `function_call` is followed by exactly one
 * `function_call_output` with its `call_id`, and every output follows its call.
 */
import { invalidRequest } from "../protocol/errors.ts";
import type { Item } from "../protocol/items.ts";

/**
 * Validates pairing over `context` (history + new input, oldest first).
 * @throws {ApiError} 400 `invalid_request_error`, `param: "input"`, with OpenAI's messages and a
 *   code (never null):
 *   - `function_call_not_found`: `No tool call found for function call output with call_id <id>.`
 *     (orphan or early output)
 *   - `duplicate_function_call_output` / `duplicate_function_call`:
 *     `Duplicate function call output for call_id <id>.` / `Duplicate function call with call_id <id>.`
 *   - `function_call_output_missing`: `No tool output found for function call <id>.` (a call left
 *     unanswered)
 */
export function validateToolPairing(context: readonly Item[]): void {
  const open = new Set<string>();
  const answered = new Set<string>();
  const seenCalls = new Set<string>();
  for (const item of context) {
    if (item.type === "function_call" && "call_id" in item && typeof item.call_id === "string") {
      if (seenCalls.has(item.call_id)) {
        throw invalidRequest(
          `Duplicate function call with call_id ${item.call_id}.`,
          "input",
          "duplicate_function_call",
        );
      }
      seenCalls.add(item.call_id);
      open.add(item.call_id);
    } else if (
      item.type === "function_call_output" &&
      "call_id" in item &&
      typeof item.call_id === "string"
    ) {
      if (answered.has(item.call_id)) {
        throw invalidRequest(
          `Duplicate function call output for call_id ${item.call_id}.`,
          "input",
          "duplicate_function_call_output",
        );
      }
      if (!open.has(item.call_id)) {
        throw invalidRequest(
          `No tool call found for function call output with call_id ${item.call_id}.`,
          "input",
          "function_call_not_found",
        );
      }
      open.delete(item.call_id);
      answered.add(item.call_id);
    }
  }
  const missing = open.values().next();
  if (!missing.done)
    throw invalidRequest(
      `No tool output found for function call ${missing.value}.`,
      "input",
      "function_call_output_missing",
    );
}
