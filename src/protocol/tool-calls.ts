/**
 * Tool calls in the Responses item vocabulary: which item types are calls a client answers, which
 * are their outputs (paired by `call_id`), and the wire order strict providers require.
 * OpenAI pairs a call with its output by `call_id` wherever the output sits after it
 * (https://github.com/BerriAI/litellm/pull/27953); strict providers (DeepSeek's Responses API,
 * every Chat Completions server) also require the output inside its call's tool group, the
 * unbroken run of calls and outputs
 * (https://github.com/deepseek-ai/awesome-deepseek-integration/issues/740).
 * Invariant: lookups by item type are own-entry lookups (Maps), so a client's item type named
 * after an `Object.prototype` member is never mistaken for a call.
 */
import type { Item } from "./items.ts";

/** Tool-call item types, with their wording in errors. */
export const CALL_KIND: ReadonlyMap<string, string> = new Map([
  ["function_call", "function call"],
  ["custom_tool_call", "custom tool call"],
]);
/** Their output item types, with the wording of the call they answer. */
export const OUTPUT_KIND: ReadonlyMap<string, string> = new Map([
  ["function_call_output", "function call"],
  ["custom_tool_call_output", "custom tool call"],
]);

/** Tool-call item types (`function_call`, `custom_tool_call`). */
export const CALL_TYPES: ReadonlySet<string> = new Set(CALL_KIND.keys());
/** Their output item types (`function_call_output`, `custom_tool_call_output`). */
export const OUTPUT_TYPES: ReadonlySet<string> = new Set(OUTPUT_KIND.keys());

/** The item's `call_id`, or null when it has none. */
export function callIdOf(item: Item): string | null {
  const callId = (item as { call_id?: unknown }).call_id;
  return typeof callId === "string" ? callId : null;
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
