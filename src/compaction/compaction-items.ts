/**
 * Compaction items in a conversation: the `compaction_trigger` a client may end its input with,
 * the `compaction` items a chain carries, what an upstream is sent in place of Deltagate's own,
 * and where a compacted chain's context starts. Pure: no I/O.
 * - `compaction_trigger` ("Compacts the current context. Must be the final input item", openai-node
 *   `ResponseInputItem.CompactionTrigger`): only as the last input item (else 400, param
 *   `input[i]`); it is taken off the input, so it is never stored nor echoed.
 * - A compaction item produced as a response's output (its upstream's, or Deltagate's own) is
 *   marked with `ORIGIN_FIELD` (Deltagate-only, never shown to clients, stripped from what
 *   clients send): on later turns of the chain, the context sent upstream starts at the latest
 *   such item, as OpenAI's server-side compaction does ("The latest compaction item carries the
 *   necessary context to continue the conversation"). A compaction item a client sends is used as
 *   sent, with what the client put around it.
 * - A Deltagate compaction item goes upstream as one user message: `SUMMARY_PREFIX` + the summary.
 * Source: https://developers.openai.com/api/docs/guides/compaction
 */
import type { CountedContext } from "../context/counted-context.ts";
import { invalidRequest } from "../protocol/errors.ts";
import type { Item, StoredItem } from "../protocol/items.ts";
import { ORIGIN_FIELD } from "../upstream/encrypted-reasoning.ts";

/** The item type that asks for a compaction of the context. */
export const TRIGGER_TYPE = "compaction_trigger";
/** The item type of a compacted context. */
export const COMPACTION_TYPE = "compaction";
/** `ORIGIN_FIELD` value of a compaction item Deltagate produced as a response's output. */
export const DELTAGATE_ORIGIN = "deltagate";

/**
 * The text that introduces a summary when a Deltagate compaction item is expanded for an upstream
 * (the model reads it as a message from the user, the one role every upstream accepts anywhere).
 */
export const SUMMARY_PREFIX =
  "Summary of the earlier part of this conversation (it was compacted; continue from it as if the full history were here):\n\n";

/** The input items without a trailing `compaction_trigger`, and whether there was one. */
export interface SplitInput<T extends Item> {
  items: T[];
  trigger: boolean;
}

/**
 * Takes a trailing `compaction_trigger` off `items`.
 * @throws {ApiError} 400 `invalid_value` (param `input[i]`) for a trigger anywhere but last.
 */
export function splitTrigger<T extends Item>(items: readonly T[]): SplitInput<T> {
  const last = items.length - 1;
  items.forEach((item, index) => {
    if (item.type === TRIGGER_TYPE && index !== last) {
      throw invalidRequest(
        "A compaction_trigger item must be the final input item.",
        `input[${index}]`,
        "invalid_value",
      );
    }
  });
  const trigger = last >= 0 && items[last]?.type === TRIGGER_TYPE;
  return { items: trigger ? items.slice(0, last) : [...items], trigger };
}

/** True for a `compaction` item. */
export function isCompaction(item: Item): boolean {
  return item.type === COMPACTION_TYPE;
}

/** The `encrypted_content` of a compaction item, or null. */
export function compactionContent(item: Item): string | null {
  const content = (item as { encrypted_content?: unknown }).encrypted_content;
  return typeof content === "string" ? content : null;
}

/** True for a compaction item that was produced as a response's output (see the module header). */
export function startsWindow(item: Item): boolean {
  return isCompaction(item) && typeof (item as Record<string, unknown>)[ORIGIN_FIELD] === "string";
}

/**
 * `history` from its latest window-starting compaction item on (itself included), or `history`
 * when it holds none. The counts and bounds of the kept items are kept.
 */
export function fromWindowStart(history: CountedContext): CountedContext {
  let start = -1;
  for (let i = history.items.length - 1; i >= 0; i--) {
    const item = history.items[i];
    if (item && startsWindow(item)) {
      start = i;
      break;
    }
  }
  if (start <= 0) return history;
  const counted = history.counted.slice(start);
  let bound = 0;
  for (const c of counted) bound += c.tokens ?? c.bound;
  return { items: history.items.slice(start), counted, bound };
}

/** The message an upstream gets in place of a Deltagate compaction item with this summary. */
export function expandedSummary(id: string, summary: string): StoredItem {
  return {
    type: "message",
    id,
    role: "user",
    content: [{ type: "input_text", text: `${SUMMARY_PREFIX}${summary}` }],
  } as StoredItem;
}

/** A user message as OpenAI lists it in a compacted output: with `status` and content parts. */
export function retainedUserMessage(item: StoredItem): StoredItem {
  const fields = item as Record<string, unknown>;
  const content =
    typeof fields.content === "string" ? [{ type: "input_text", text: fields.content }] : fields.content;
  return { ...item, content, status: "completed" } as StoredItem;
}
