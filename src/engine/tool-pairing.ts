/**
 * Tool-call pairing in the Responses API: the check run on the full effective context before any
 * upstream call, with OpenAI's messages, and the wire order sent upstream.
 * - OpenAI pairs a `function_call` (or `custom_tool_call`) with its output by `call_id`, wherever
 *   the output sits after it; a call left unanswered or an output without a call is a 400
 *   (https://github.com/openai/codex/issues/394, https://github.com/continuedev/continue/issues/10092,
 *   https://github.com/Soju06/codex-lb/issues/1168 for custom tool calls). Deltagate accepts and
 *   refuses exactly that.
 * - Strict providers (DeepSeek's Responses API, every Chat Completions server) also require the
 *   output to sit in its call's tool group, the unbroken run of calls and outputs
 *   (https://github.com/deepseek-ai/awesome-deepseek-integration/issues/740), which OpenAI does
 *   not (https://github.com/BerriAI/litellm/pull/27953): `adjacentToolOutputs` moves each output
 *   there before items go upstream, so both accept the request.
 * Invariant after a successful check: every call is followed by exactly one output with its
 * `call_id`, and every output follows its call.
 */
import { invalidRequest } from "../protocol/errors.ts";
import type { Item } from "../protocol/items.ts";
import { CALL_KIND, callIdOf, OUTPUT_KIND } from "../protocol/tool-calls.ts";

/**
 * Validates pairing over `context` (history + new input, oldest first).
 * @throws {ApiError} 400 `invalid_request_error`, `param: "input"`, `code: null`, exactly as OpenAI
 *   answers (simulator/pairing.ts cites the public reports):
 *   - `No tool call found for function call output with call_id <id>.` (orphan or early output)
 *   - `Duplicate function call output for call_id <id>.` / `Duplicate function call with call_id <id>.`
 *   - `No tool output found for function call <id>.` (a call left unanswered)
 *   (custom tool calls read "custom tool call" instead of "function call").
 */
export function validateToolPairing(context: readonly Item[]): void {
  const open = new Map<string, string>();
  const answered = new Set<string>();
  const seenCalls = new Set<string>();
  for (const item of context) {
    const callId = callIdOf(item);
    if (callId === null) continue;
    const callKind = CALL_KIND.get(item.type);
    const outputKind = OUTPUT_KIND.get(item.type);
    if (callKind) {
      if (seenCalls.has(callId)) {
        throw invalidRequest(`Duplicate ${callKind} with call_id ${callId}.`, "input");
      }
      seenCalls.add(callId);
      open.set(callId, callKind);
    } else if (outputKind) {
      if (answered.has(callId)) {
        throw invalidRequest(`Duplicate ${outputKind} output for call_id ${callId}.`, "input");
      }
      if (!open.has(callId)) {
        throw invalidRequest(`No tool call found for ${outputKind} output with call_id ${callId}.`, "input");
      }
      open.delete(callId);
      answered.add(callId);
    }
  }
  const [missing] = open;
  if (missing) throw invalidRequest(`No tool output found for ${missing[1]} ${missing[0]}.`, "input");
}
