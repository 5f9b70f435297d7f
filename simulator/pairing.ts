/**
 * Tool-call pairing validation like OpenAI's (spec §4.3): every `function_call` in the
 * effective context needs exactly one later `function_call_output` with the same `call_id`,
 * and every output needs an earlier call. Custom tool calls are paired the same way.
 */
import { invalidRequest } from "./errors.ts";
import type { JsonObject } from "./json.ts";

const CALL_TYPES = new Set(["function_call", "custom_tool_call"]);
const OUTPUT_TYPES = new Set(["function_call_output", "custom_tool_call_output"]);

/**
 * Throws a 400 SimError (`param: "input"`) on the first pairing violation:
 * an output without an earlier call (or a duplicate output) → `No tool call found for function
 * call output with call_id <id>.`; a call without output → `No tool output found for function
 * call <id>.` Returns normally when the context is well paired.
 */
export function validateToolPairing(items: JsonObject[]): void {
  const pending = new Set<string>();
  const answered = new Set<string>();
  for (const item of items) {
    const type = typeof item.type === "string" ? item.type : "";
    const callId = typeof item.call_id === "string" ? item.call_id : "";
    if (CALL_TYPES.has(type)) {
      pending.add(callId);
    } else if (OUTPUT_TYPES.has(type)) {
      if (!pending.has(callId) || answered.has(callId)) {
        throw invalidRequest(`No tool call found for function call output with call_id ${callId}.`, "input");
      }
      answered.add(callId);
    }
  }
  for (const callId of pending) {
    if (!answered.has(callId))
      throw invalidRequest(`No tool output found for function call ${callId}.`, "input");
  }
}
