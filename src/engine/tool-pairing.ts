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

/** Item types that are tool calls answered by a client output, with their wording in errors. */
const CALL_KIND: Record<string, string> = {
  function_call: "function call",
  custom_tool_call: "custom tool call",
};
const OUTPUT_KIND: Record<string, string> = {
  function_call_output: "function call",
  custom_tool_call_output: "custom tool call",
};

/** Tool-call item types (`function_call`, `custom_tool_call`). */
export const CALL_TYPES: ReadonlySet<string> = new Set(Object.keys(CALL_KIND));
/** Their output item types (`function_call_output`, `custom_tool_call_output`). */
export const OUTPUT_TYPES: ReadonlySet<string> = new Set(Object.keys(OUTPUT_KIND));

function callIdOf(item: Item): string | null {
  const callId = (item as { call_id?: unknown }).call_id;
  return typeof callId === "string" ? callId : null;
}

/**
 * Validates pairing over `context` (history + new input, oldest first).
 * @throws {ApiError} 400 `invalid_request_error`, `param: "input"`:
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
    const callKind = CALL_KIND[item.type];
    const outputKind = OUTPUT_KIND[item.type];
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

/**
 * The same items with every output moved into its call's tool group: right after the group's
 * last call or output (before any reasoning item that closes the group, which must stay in front
 * of the model item it belongs to). Outputs whose call is not in `items` — a delta whose calls
 * are already upstream, at the end of its context — go first. Everything else keeps its order.
 * @param items a paired context (`validateToolPairing`), or a delta on top of one.
 * @returns `items` itself when nothing moves.
 */
export function adjacentToolOutputs<T extends Item>(items: readonly T[]): readonly T[] {
  const calls = new Set<string>();
  for (const item of items) {
    const callId = callIdOf(item);
    if (callId !== null && CALL_TYPES.has(item.type)) calls.add(callId);
  }
  const early: T[] = [];
  const outputs = new Map<string, T>();
  for (const item of items) {
    const callId = callIdOf(item);
    if (callId === null || !OUTPUT_TYPES.has(item.type)) continue;
    if (!calls.has(callId)) early.push(item);
    else if (!outputs.has(callId)) outputs.set(callId, item);
  }
  const out: T[] = [];
  const placed = new Set<string>();
  let group: string[] = [];
  let insertAt = -1;
  const closeGroup = () => {
    const missing = group.filter((id) => !placed.has(id) && outputs.has(id));
    for (const id of missing) placed.add(id);
    out.splice(insertAt, 0, ...missing.map((id) => outputs.get(id) as T));
    group = [];
    insertAt = -1;
  };
  for (const item of items) {
    const callId = callIdOf(item);
    if (callId !== null && CALL_TYPES.has(item.type)) {
      group.push(callId);
      out.push(item);
      insertAt = out.length;
    } else if (callId !== null && OUTPUT_TYPES.has(item.type)) {
      if (!calls.has(callId) || placed.has(callId) || outputs.get(callId) !== item) continue;
      if (!group.includes(callId)) continue; // placed when its group closed
      placed.add(callId);
      out.push(item);
      insertAt = out.length;
    } else if (item.type === "reasoning") {
      out.push(item);
    } else {
      if (group.length > 0) closeGroup();
      out.push(item);
    }
  }
  if (group.length > 0) closeGroup();
  const result = [...early, ...out];
  return result.every((item, i) => item === items[i]) && result.length === items.length ? items : result;
}
