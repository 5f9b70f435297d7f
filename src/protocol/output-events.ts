/**
 * The grammar of a response's output events: which item, part and field each `…delta` / `…done`
 * event writes, and the one fold that rebuilds output items from those events. Owns that table
 * (every module that reads output text — partial output, released output, the output guard —
 * reads it here) and the fold over it.
 * - `response.output_item.added` starts an item (a deep copy, built in place from then on);
 *   `response.output_item.done` replaces it with the finished item, which is never changed again;
 * - `response.content_part.added/done` and `response.reasoning_summary_part.added/done` set the
 *   part at `content_index` / `summary_index` of the item's `content` / `summary`;
 * - a text `…delta` appends to its part's field (the part is created when no `…part.added`
 *   announced it) or, for a call's arguments or input, to the item's own field; its `…done` sets
 *   the whole text.
 * Invariants: the same events give the same items; the events are never mutated (they are also
 *   the log a client replays); output positions past `MAX_OUTPUT_INDEX` are ignored, so a hostile
 *   upstream cannot make the fold allocate more.
 * Source: https://platform.openai.com/docs/api-reference/responses-streaming (openai-node:
 *   `ResponseContentPartAddedEvent.part` is an output text, a refusal or a `ReasoningText`)
 */
import { isRecord } from "./json.ts";

type Fields = Record<string, unknown>;

/** A streamed output event, with its fields not interpreted yet. */
export interface OutputEvent {
  type: string;
  [field: string]: unknown;
}

/** An item list whose parts stream: a message's or reasoning's `content`, a reasoning `summary`. */
export type PartList = "content" | "summary";

/** One kind of text stream: where its `…delta` / `…done` events write. */
export interface TextStream {
  /** Short name (distinct per stream kind): keys a stream with the event's positions. */
  name: string;
  delta: string;
  done: string;
  /** The item list holding the text's part, or null: the text is a field of the item itself. */
  list: PartList | null;
  /** The text's field in its part (or item); the `…done` event carries the whole text in it too. */
  field: "text" | "refusal" | "arguments" | "input";
  /** `type` of the part (`list` set) or of the item (`list` null) the stream writes. */
  owner: string;
}

/** Every text stream of the protocol. */
export const TEXT_STREAMS: readonly TextStream[] = [
  {
    name: "text",
    delta: "response.output_text.delta",
    done: "response.output_text.done",
    list: "content",
    field: "text",
    owner: "output_text",
  },
  {
    name: "refusal",
    delta: "response.refusal.delta",
    done: "response.refusal.done",
    list: "content",
    field: "refusal",
    owner: "refusal",
  },
  {
    name: "reasoning",
    delta: "response.reasoning_text.delta",
    done: "response.reasoning_text.done",
    list: "content",
    field: "text",
    owner: "reasoning_text",
  },
  {
    name: "summary",
    delta: "response.reasoning_summary_text.delta",
    done: "response.reasoning_summary_text.done",
    list: "summary",
    field: "text",
    owner: "summary_text",
  },
  {
    name: "arguments",
    delta: "response.function_call_arguments.delta",
    done: "response.function_call_arguments.done",
    list: null,
    field: "arguments",
    owner: "function_call",
  },
  {
    name: "input",
    delta: "response.custom_tool_call_input.delta",
    done: "response.custom_tool_call_input.done",
    list: null,
    field: "input",
    owner: "custom_tool_call",
  },
];

/** `…delta` event type → its stream. */
export const DELTA_EVENTS: ReadonlyMap<string, TextStream> = new Map(TEXT_STREAMS.map((s) => [s.delta, s]));
/** Text `…done` event type → its stream. */
export const DONE_EVENTS: ReadonlyMap<string, TextStream> = new Map(TEXT_STREAMS.map((s) => [s.done, s]));

/** The events that set a whole part, by list. */
export const PART_EVENTS: Readonly<Record<PartList, { added: string; done: string; index: string }>> = {
  content: {
    added: "response.content_part.added",
    done: "response.content_part.done",
    index: "content_index",
  },
  summary: {
    added: "response.reasoning_summary_part.added",
    done: "response.reasoning_summary_part.done",
    index: "summary_index",
  },
};

const PART_EVENT_LISTS: ReadonlyMap<string, { list: PartList; done: boolean }> = new Map([
  [PART_EVENTS.content.added, { list: "content", done: false }],
  [PART_EVENTS.content.done, { list: "content", done: true }],
  [PART_EVENTS.summary.added, { list: "summary", done: false }],
  [PART_EVENTS.summary.done, { list: "summary", done: true }],
]);

/** The stream of a part, by the part's `type` (the stream its `…done` event closes). */
export const PART_STREAMS: ReadonlyMap<string, TextStream> = new Map(
  TEXT_STREAMS.filter((s) => s.list !== null).map((s) => [s.owner, s]),
);
/** The stream of an item's own text field, by the item's `type`. */
export const ITEM_STREAMS: ReadonlyMap<string, TextStream> = new Map(
  TEXT_STREAMS.filter((s) => s.list === null).map((s) => [s.owner, s]),
);

export const ITEM_ADDED = "response.output_item.added";
export const ITEM_DONE = "response.output_item.done";

/** Output positions beyond this are ignored (a hostile upstream cannot make us allocate more). */
export const MAX_OUTPUT_INDEX = 4096;

/** A valid output, content or summary position, or null. */
export function positionOf(value: unknown): number | null {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= MAX_OUTPUT_INDEX
    ? value
    : null;
}

/**
 * The key of the text `event` extends or finishes (`stream` is its entry of `DELTA_EVENTS` or
 * `DONE_EVENTS`): equal for every event of one text, distinct between texts.
 */
export function streamKey(event: OutputEvent, stream: TextStream): string {
  const index = stream.list === null ? "" : event[PART_EVENTS[stream.list].index];
  return `${event.output_index}/${index}/${stream.name}`;
}

/** One output item as far as its events went. */
export interface FoldedItem {
  /** The item: a copy built in place while it streams, the `output_item.done` item once done. */
  item: Fields;
  /** `response.output_item.done` was applied. */
  done: boolean;
  /** Texts and parts whose `…done` event was applied while the item streamed (`finishedKey`). */
  finished: Set<string>;
}

/**
 * The key under which `FoldedItem.finished` records a `…done` event: of the text (`"text"`) or of
 * the whole part (`"part"`) at `at` of `list`; an item's own field (`list` null) has only a text.
 */
export function finishedKey(list: PartList | null, at: number, what: "text" | "part"): string {
  return `${list ?? "item"}/${at}/${what}`;
}

/** `item[list]` as an array, created when missing. */
function listOf(item: Fields, list: PartList): unknown[] {
  const value = item[list];
  if (Array.isArray(value)) return value;
  const created: unknown[] = [];
  item[list] = created;
  return created;
}

/** The part at `at` of `list`, created as an empty part of `stream` when missing. */
function partAt(list: unknown[], at: number, stream: TextStream): Fields {
  const part = list[at];
  if (isRecord(part)) return part;
  const created: Fields =
    stream.owner === "output_text"
      ? { type: "output_text", text: "", annotations: [] }
      : { type: stream.owner, [stream.field]: "" };
  list[at] = created;
  return created;
}

/**
 * Folds output events into items, by `output_index`. Events other than output events (lifecycle,
 * keepalive, terminal) are ignored.
 */
export class OutputFold {
  /** The items by `output_index` (holes where none started). */
  readonly slots: Array<FoldedItem | undefined> = [];

  apply(event: OutputEvent): void {
    const index = positionOf(event.output_index);
    if (index === null) return;
    const type = event.type;
    if (type === ITEM_ADDED || type === ITEM_DONE) {
      if (!isRecord(event.item)) return;
      const done = type === ITEM_DONE;
      // An added item is copied deep: it is built in place. A done item is never changed here.
      const item = done ? event.item : structuredClone(event.item);
      this.slots[index] = { item, done, finished: new Set() };
      return;
    }
    const slot = this.slots[index];
    if (!slot || slot.done) return;
    const delta = DELTA_EVENTS.get(type);
    if (delta) {
      const text = event.delta;
      const at = this.at(event, delta.list);
      if (at === null || typeof text !== "string") return;
      const target = delta.list === null ? slot.item : partAt(listOf(slot.item, delta.list), at, delta);
      const before = target[delta.field];
      target[delta.field] = (typeof before === "string" ? before : "") + text;
      return;
    }
    const done = DONE_EVENTS.get(type);
    if (done) {
      const whole = event[done.field];
      const at = this.at(event, done.list);
      if (at === null || typeof whole !== "string") return;
      const target = done.list === null ? slot.item : partAt(listOf(slot.item, done.list), at, done);
      target[done.field] = whole;
      slot.finished.add(finishedKey(done.list, at, "text"));
      return;
    }
    const parts = PART_EVENT_LISTS.get(type);
    if (parts) {
      const at = this.at(event, parts.list);
      if (at === null || !isRecord(event.part)) return;
      listOf(slot.item, parts.list)[at] = structuredClone(event.part);
      if (parts.done) slot.finished.add(finishedKey(parts.list, at, "part"));
    }
  }

  /** The part position an event of `list` names (0 for an item's own field), or null. */
  private at(event: OutputEvent, list: PartList | null): number | null {
    return list === null ? 0 : positionOf(event[PART_EVENTS[list].index]);
  }
}
