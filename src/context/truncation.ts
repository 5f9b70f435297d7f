/**
 * The `truncation` setting: fits a context into the model's context window before
 * anything is sent upstream. Owns turn segmentation and the `context_length_exceeded` error.
 * - `disabled` (the default): a context over the window is a request-level 400
 *   `context_length_exceeded`, as OpenAI reports it.
 * - `auto`: whole oldest turns are dropped until the rest fits. A turn is a user message and
 *   everything up to the next user message; a user message that arrives while a tool call
 *   (`function_call`, `custom_tool_call`) is still unanswered does not start a turn, so a call
 *   and its output are never separated.
 *   The turn that contains the request's own input is never dropped; if it alone does not fit,
 *   the same 400 is raised.
 * Source: https://platform.openai.com/docs/api-reference/responses/create (`truncation`).
 */

import { invalidRequest } from "../protocol/errors.ts";
import type { Item } from "../protocol/items.ts";
import { CALL_TYPES, OUTPUT_TYPES } from "../protocol/tool-calls.ts";

/** The `truncation` modes of the Responses API. */
export type TruncationMode = "auto" | "disabled";

/** OpenAI's message for an input over the context window. */
const CONTEXT_LENGTH_EXCEEDED_MESSAGE =
  "Your input exceeds the context window of this model. Please adjust your input and try again.";

/** 400 `context_length_exceeded` on `input`. */
function contextLengthExceeded() {
  return invalidRequest(CONTEXT_LENGTH_EXCEEDED_MESSAGE, "input", "context_length_exceeded");
}

/**
 * Indices where a turn starts: 0, and every user message outside an unanswered tool call.
 * @returns ascending indices into `items`.
 */
export function turnStarts(items: readonly Item[]): number[] {
  const starts = [0];
  const open = new Set<string>();
  items.forEach((item, index) => {
    const fields = item as { role?: unknown; call_id?: unknown };
    if (item.type === "message" && fields.role === "user" && open.size === 0 && index > 0) {
      starts.push(index);
    }
    if (typeof fields.call_id !== "string") return;
    if (CALL_TYPES.has(item.type)) open.add(fields.call_id);
    else if (OUTPUT_TYPES.has(item.type)) open.delete(fields.call_id);
  });
  return starts;
}

/**
 * Where the context that is sent starts.
 * @param items the full context, oldest first.
 * @param tokens tokens per item (same length).
 * @param protectedFrom index of the request's first own input item (`items.length` when none):
 *   the turn containing it and everything after it are never dropped.
 * @param budget tokens available to items (window minus instructions, tools and the output
 *   reservation); may be negative.
 * @returns the index of the first item to send (0 = nothing dropped).
 * @throws {ApiError} 400 `context_length_exceeded` when the context cannot fit under `mode`.
 */
export function fitStart(
  items: readonly Item[],
  tokens: readonly number[],
  protectedFrom: number,
  budget: number,
  mode: TruncationMode,
): number {
  let remaining = 0;
  for (const t of tokens) remaining += t;
  if (remaining <= budget) return 0;
  if (mode === "disabled") throw contextLengthExceeded();
  let dropped = 0;
  for (const start of turnStarts(items)) {
    if (start > protectedFrom) break;
    for (; dropped < start; dropped++) remaining -= tokens[dropped] ?? 0;
    if (remaining <= budget) return start;
  }
  throw contextLengthExceeded();
}
