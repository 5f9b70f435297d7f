/**
 * Tool-call pairing in a Responses context (history of the chain + this request's input), with
 * OpenAI's error messages. Two levels:
 * - OpenAI's own rule (always on): every `function_call` / `custom_tool_call` has exactly one
 *   `*_output` with its `call_id` somewhere after it, and every output has an earlier call.
 * - the strict rule (`strict: true`, the default): an output must also stay in its call's
 *   tool group — the unbroken run of calls, outputs and reasoning items that contains the call.
 *   OpenAI itself pairs by `call_id` wherever the output sits (litellm and kolega-code report it
 *   tolerated a message between a call and its output), but OpenAI-compatible providers
 *   (DeepSeek's Responses API) and every Chat Completions converter reject that shape, so the
 *   reference upstream holds Deltagate to the stricter rule: a request it accepts passes both.
 * Sources (error bodies observed from api.openai.com):
 * - https://github.com/continuedev/continue/issues/10092 — `No tool call found for function call
 *   output with call_id …` (param `input`, code null);
 * - https://github.com/openai/codex/issues/394 — a call left without output before the next user
 *   message: `No tool output found for function call …`;
 * - https://github.com/Soju06/codex-lb/issues/1168 — `No tool output found for custom tool call …`;
 * - https://github.com/deepseek-ai/awesome-deepseek-integration/issues/740 — adjacency enforced by
 *   a strict provider; https://github.com/BerriAI/litellm/pull/27953 — OpenAI tolerates it.
 */
import { invalidRequest } from "./errors.ts";
import type { JsonObject } from "./json.ts";

const CALL_KIND: Record<string, string> = {
  function_call: "function call",
  custom_tool_call: "custom tool call",
};
const OUTPUT_KIND: Record<string, string> = {
  function_call_output: "function call",
  custom_tool_call_output: "custom tool call",
};

function noOutput(kind: string, callId: string) {
  return invalidRequest(`No tool output found for ${kind} ${callId}.`, "input");
}

/** True for the items a tool group may contain (calls, their outputs, reasoning between calls). */
function inToolGroup(type: string): boolean {
  return type in CALL_KIND || type in OUTPUT_KIND || type === "reasoning";
}

/**
 * Throws a 400 SimError (`param: "input"`) on the first pairing violation:
 * - an output without an earlier call, or a second output for a call →
 *   `No tool call found for <kind> output with call_id <id>.`;
 * - a call without output → `No tool output found for <kind> <id>.`;
 * - strict only: an output outside its call's tool group → the same "No tool output found"
 *   for the call, which has no output where a strict provider looks for it.
 */
export function validateToolPairing(items: readonly JsonObject[], strict: boolean): void {
  const open = new Map<string, { kind: string; group: number }>();
  const answered = new Set<string>();
  let group = 0;
  let inGroup = false;
  for (const item of items) {
    const type = typeof item.type === "string" ? item.type : "";
    const callId = typeof item.call_id === "string" ? item.call_id : "";
    if (inToolGroup(type)) {
      if (!inGroup) group++;
      inGroup = true;
    } else {
      inGroup = false;
    }
    const callKind = CALL_KIND[type];
    const outputKind = OUTPUT_KIND[type];
    if (callKind) {
      open.set(callId, { kind: callKind, group });
    } else if (outputKind) {
      const call = open.get(callId);
      if (!call || answered.has(callId)) {
        throw invalidRequest(`No tool call found for ${outputKind} output with call_id ${callId}.`, "input");
      }
      if (strict && call.group !== group) throw noOutput(call.kind, callId);
      answered.add(callId);
    }
  }
  for (const [callId, call] of open) {
    if (!answered.has(callId)) throw noOutput(call.kind, callId);
  }
}
