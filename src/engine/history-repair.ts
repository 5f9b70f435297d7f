/**
 * Repairs a stored history before it becomes a model context: whatever happened to the chain
 * (a response that failed or was cancelled mid-stream, a response deleted from the middle of a
 * chain), the history handed on holds only complete, valid items. Pure: no I/O.
 * What is dropped (each drop is also what depends on it):
 * - items still `in_progress` (never finished; only an interrupted upstream reports them);
 * - an output (`function_call_output`, `custom_tool_call_output`) whose call is not before it:
 *   the response that made the call was deleted;
 * - a call no output answers, neither in the history nor in the new input, unless it belongs to
 *   the output of the parent response and that response finished (completed or incomplete):
 *   such a call is the client's to answer, and the turn is then refused with OpenAI's
 *   `No tool output found for function call …` (src/engine/context-rules.ts). A call of a failed
 *   or cancelled response, or one whose output was deleted, was never going to be answered;
 * - a `reasoning` item not directly followed by the model item it belongs to (same response,
 *   same side): its response was cut after the reasoning, or that item was dropped above.
 *   OpenAI refuses a reasoning item without its following item
 *   (https://github.com/continuedev/continue/issues/8933).
 * Invariant: repairing is deterministic and idempotent, and repairing a history extended by a
 * turn gives the repaired history extended by that turn, so the render cache (which keeps the
 * repaired context) and a re-read from SQLite agree.
 */
import type { CountedContext, CountedItem } from "../context/counted-context.ts";
import type { Item } from "../protocol/items.ts";
import { CALL_TYPES, OUTPUT_TYPES } from "../protocol/tool-calls.ts";

/** The parent response of the turn: its id and terminal status. */
export interface ParentState {
  id: string;
  status: string;
}

/** Statuses of a response that ended normally: its calls are the client's to answer. */
const FINISHED = new Set(["completed", "incomplete"]);

function callIdOf(item: Item): string | null {
  const callId = (item as { call_id?: unknown }).call_id;
  return typeof callId === "string" ? callId : null;
}

/** True for an item the model produces: an assistant message or a tool call (`*_call`). */
export function isModelItem(item: Item): boolean {
  if (item.type === "message") return (item as { role?: unknown }).role === "assistant";
  return (
    item.type.endsWith("_call") || item.type === "mcp_list_tools" || item.type === "mcp_approval_request"
  );
}

function sameSide(a: CountedItem, b: CountedItem): boolean {
  return a.key.responseId === b.key.responseId && a.key.kind === b.key.kind;
}

/**
 * The history to build this turn's context from.
 * @param history history(parent) with sizes (render cache or SQLite), oldest first.
 * @param input the turn's own input items.
 * @param parent the parent response (null for a new chain).
 * @returns `history` itself when nothing needs dropping, else a new context without the dropped
 *   items (sizes kept).
 */
export function repairHistory(
  history: CountedContext,
  input: readonly Item[],
  parent: ParentState | null,
): CountedContext {
  let kept = history.counted.filter((c) => (c.item as { status?: unknown }).status !== "in_progress");

  const called = new Set<string>();
  kept = kept.filter(({ item }) => {
    const callId = callIdOf(item);
    if (callId === null) return true;
    if (CALL_TYPES.has(item.type)) called.add(callId);
    return !OUTPUT_TYPES.has(item.type) || called.has(callId);
  });

  const answered = new Set<string>();
  for (const { item } of [...kept, ...input.map((item) => ({ item }))]) {
    const callId = callIdOf(item);
    if (callId !== null && OUTPUT_TYPES.has(item.type)) answered.add(callId);
  }
  const parentFinished = parent !== null && FINISHED.has(parent.status);
  kept = kept.filter(({ item, key }) => {
    const callId = callIdOf(item);
    if (callId === null || !CALL_TYPES.has(item.type) || answered.has(callId)) return true;
    return parentFinished && key.responseId === parent?.id && key.kind === "output";
  });

  kept = kept.filter((c, index) => {
    if (c.item.type !== "reasoning") return true;
    const next = kept[index + 1];
    return next !== undefined && sameSide(c, next) && isModelItem(next.item);
  });

  if (kept.length === history.counted.length) return history;
  let bound = 0;
  for (const c of kept) bound += c.tokens ?? c.bound;
  return { items: kept.map((c) => c.item), counted: kept, bound };
}
