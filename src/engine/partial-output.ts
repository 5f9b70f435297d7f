/**
 * The output a client has been sent so far, rebuilt from a response's output events. Owns what
 * an interrupted response (failed mid-stream, cancelled, cut by a restart) reports as its
 * `output`: every item the stream finished (`response.output_item.done`) as it was sent, and an
 * item cut mid-stream as far as its deltas went —
 * - a `message` with `status: "incomplete"` (OpenAI's status for a message cut before its end):
 *   its text is what the client read, and it stays in the conversation;
 * - any other item (a call whose arguments were cut, reasoning) with the status its
 *   `response.output_item.added` announced, `in_progress`: it never finished, so it is left out
 *   of the context a continuation sends upstream (src/engine/history-repair.ts).
 * Invariant: the same events give the same items, whether applied live (turn-stream.ts) or read
 * back from a persisted event log after a restart (recovery.ts); the events themselves are never
 * mutated (they are also the log a client replays).
 * Source: https://platform.openai.com/docs/api-reference/responses-streaming,
 *   https://platform.openai.com/docs/api-reference/responses/object (output item `status`)
 */
import type { StoredItem } from "../protocol/items.ts";

type JsonObject = Record<string, unknown>;

/** Output positions beyond this are ignored (a hostile upstream cannot make us allocate more). */
const MAX_OUTPUT_INDEX = 4096;

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function indexOf(value: unknown): number | null {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= MAX_OUTPUT_INDEX
    ? value
    : null;
}

/** `item[field]` as an array, created when missing. */
function listOf(item: JsonObject, field: string): unknown[] {
  const value = item[field];
  if (Array.isArray(value)) return value;
  const list: unknown[] = [];
  item[field] = list;
  return list;
}

/** The part at `index` of `list`, created as `fresh` when missing; null for a bad index. */
function partAt(list: unknown[], index: unknown, fresh: () => JsonObject): JsonObject | null {
  const at = indexOf(index);
  if (at === null) return null;
  const part = list[at];
  if (isObject(part)) return part;
  const created = fresh();
  list[at] = created;
  return created;
}

/** Replaces the part at `index` of `list` with a copy of `part` (a `*_part.added/done` event). */
function setPart(list: unknown[], index: unknown, part: unknown): void {
  const at = indexOf(index);
  if (at !== null && isObject(part)) list[at] = structuredClone(part);
}

function append(target: JsonObject | null, field: string, delta: unknown): void {
  if (!target || typeof delta !== "string") return;
  target[field] = (typeof target[field] === "string" ? target[field] : "") + delta;
}

function assign(target: JsonObject | null, field: string, value: unknown): void {
  if (target && typeof value === "string") target[field] = value;
}

const outputText = (): JsonObject => ({ type: "output_text", text: "", annotations: [] });
const reasoningText = (): JsonObject => ({ type: "reasoning_text", text: "" });
const summaryText = (): JsonObject => ({ type: "summary_text", text: "" });

interface Slot {
  item: JsonObject;
  done: boolean;
}

/** The output of one response, as far as its events went. */
export class PartialOutput {
  private readonly slots: Array<Slot | undefined> = [];

  /** Applies one output event (with Deltagate's ids); other events are ignored. */
  apply(event: { type: string; [field: string]: unknown }): void {
    const index = indexOf(event.output_index);
    if (index === null) return;
    if (event.type === "response.output_item.added" || event.type === "response.output_item.done") {
      if (!isObject(event.item)) return;
      const done = event.type === "response.output_item.done";
      // A deep copy of an added item: deltas are applied to it in place, and the event itself is
      // left as sent. A done item is never changed here (`items()` copies it), so it is kept as is.
      this.slots[index] = { item: done ? event.item : structuredClone(event.item), done };
      return;
    }
    const slot = this.slots[index];
    if (!slot || slot.done) return;
    this.applyToItem(slot.item, event);
  }

  /** The output so far: finished items as sent, unfinished ones cut where their deltas stopped. */
  items(): StoredItem[] {
    const items: StoredItem[] = [];
    for (const slot of this.slots) {
      if (!slot) continue;
      const item = structuredClone(slot.item);
      if (!slot.done) item.status = item.type === "message" ? "incomplete" : "in_progress";
      items.push(item as StoredItem);
    }
    return items;
  }

  private applyToItem(item: JsonObject, event: { type: string; [field: string]: unknown }): void {
    switch (event.type) {
      case "response.content_part.added":
      case "response.content_part.done":
        setPart(listOf(item, "content"), event.content_index, event.part);
        break;
      case "response.output_text.delta":
        append(partAt(listOf(item, "content"), event.content_index, outputText), "text", event.delta);
        break;
      case "response.output_text.done":
        assign(partAt(listOf(item, "content"), event.content_index, outputText), "text", event.text);
        break;
      case "response.refusal.delta":
        append(
          partAt(listOf(item, "content"), event.content_index, () => ({ type: "refusal", refusal: "" })),
          "refusal",
          event.delta,
        );
        break;
      case "response.reasoning_text.delta":
        append(partAt(listOf(item, "content"), event.content_index, reasoningText), "text", event.delta);
        break;
      case "response.reasoning_text.done":
        assign(partAt(listOf(item, "content"), event.content_index, reasoningText), "text", event.text);
        break;
      case "response.reasoning_summary_part.added":
        setPart(listOf(item, "summary"), event.summary_index, event.part);
        break;
      case "response.reasoning_summary_text.delta":
        append(partAt(listOf(item, "summary"), event.summary_index, summaryText), "text", event.delta);
        break;
      case "response.reasoning_summary_text.done":
        assign(partAt(listOf(item, "summary"), event.summary_index, summaryText), "text", event.text);
        break;
      case "response.function_call_arguments.delta":
        append(item, "arguments", event.delta);
        break;
      case "response.function_call_arguments.done":
        assign(item, "arguments", event.arguments);
        break;
      case "response.custom_tool_call_input.delta":
        append(item, "input", event.delta);
        break;
      case "response.custom_tool_call_input.done":
        assign(item, "input", event.input);
        break;
      default:
        break;
    }
  }
}
