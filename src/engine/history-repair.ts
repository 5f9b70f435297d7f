/**
 * Repairs a history whose chain was cut, before it becomes a model context. Owns two rules:
 * - an item still `in_progress` never finished: its response was interrupted mid-stream (failed,
 *   cancelled, cut by a restart) while the item was being generated (src/engine/partial-output.ts
 *   keeps such items as the client saw them, e.g. a call with half its arguments). It is dropped,
 *   and so is an output that answers it (its call is then gone: the rule below). A message cut
 *   mid-text is `incomplete`, not `in_progress`, and stays: its text is what the client read;
 * - when a response is deleted (or expires), its children become the roots of their chains
 *   (src/store/conversation-store.ts); a child that answered a `function_call` of the removed
 *   ancestor then starts with a `function_call_output` whose call is gone. Such outputs are
 *   dropped: a strict upstream (OpenAI) refuses an output without its call, and nothing else in
 *   the history refers to them.
 * Invariant: only unfinished items and outputs with no earlier (kept) `function_call` of the same
 * `call_id` are dropped, only from the stored history (a client's own new input is still validated
 * as sent, src/engine/tool-pairing.ts); the stored items themselves are never changed, so
 * `input_items` and the Response object still list what was sent.
 */
import type { CountedContext, CountedItem } from "../context/counted-context.ts";

function callIdOf(item: CountedItem["item"]): string | null {
  const callId = (item as { call_id?: unknown }).call_id;
  return typeof callId === "string" ? callId : null;
}

/**
 * `history` without items still `in_progress` and without `function_call_output`s whose
 * `function_call` is not (kept) before them.
 * @returns `history` itself when nothing is dropped (the usual case: no allocation).
 */
export function withoutOrphanOutputs(history: CountedContext): CountedContext {
  const calls = new Set<string>();
  let counted: CountedItem[] | null = null;
  for (const [index, c] of history.counted.entries()) {
    const callId = callIdOf(c.item);
    const unfinished = (c.item as { status?: unknown }).status === "in_progress";
    if (c.item.type === "function_call" && callId !== null && !unfinished) calls.add(callId);
    const orphan = c.item.type === "function_call_output" && callId !== null && !calls.has(callId);
    if (orphan || unfinished) counted ??= history.counted.slice(0, index);
    else counted?.push(c);
  }
  if (counted === null) return history;
  let bound = 0;
  for (const c of counted) bound += c.tokens ?? c.bound;
  return { items: counted.map((c) => c.item), counted, bound };
}
