/**
 * What of a response's output has actually been released to the client, rebuilt from the
 * released events, and the events that close it when output checks stop a response. Owns the
 * shape of a response cut by `content_filter`: every item the client saw start is finished with
 * exactly the text it saw (`…text.done` and `…part.done` for every text and part not yet
 * finished, `output_item.done` with status `incomplete`), then `response.incomplete` with
 * `incomplete_details.reason: "content_filter"`.
 * The released events are folded by the one output-event grammar (src/protocol/output-events.ts),
 * the same fold that rebuilds an interrupted response's output (src/engine/partial-output.ts).
 * Invariant: no closing event carries a character the client was not already sent, and none
 * repeats a `…done` event the client already has.
 * Source: https://platform.openai.com/docs/api-reference/responses-streaming
 */
import { isRecord } from "../protocol/json.ts";
import {
  type FoldedItem,
  finishedKey,
  ITEM_DONE,
  ITEM_STREAMS,
  OutputFold,
  PART_EVENTS,
  PART_STREAMS,
  type PartList,
} from "../protocol/output-events.ts";
import type { UpstreamEvent } from "../upstream/upstream.ts";

/** The released output of one response. */
export class ReleasedOutput {
  private readonly fold = new OutputFold();

  /** Records an event that was released to the client. */
  observe(event: UpstreamEvent): void {
    this.fold.apply(event);
  }

  /**
   * The events that finish every released item that is not finished, then the terminal
   * `response.incomplete` (`content_filter`) whose output is exactly what was released.
   */
  closeForContentFilter(): UpstreamEvent[] {
    const events: UpstreamEvent[] = [];
    const output: Record<string, unknown>[] = [];
    this.fold.slots.forEach((slot, index) => {
      if (!slot) return;
      if (!slot.done) events.push(...close(index, slot));
      output.push(structuredClone(slot.item));
    });
    events.push({
      type: "response.incomplete",
      response: {
        object: "response",
        status: "incomplete",
        output: output as never,
        incomplete_details: { reason: "content_filter" },
        usage: null,
      },
    });
    return events;
  }
}

/** Closing events of one unfinished item; leaves `slot.item` as the closed item. */
function close(index: number, slot: FoldedItem): UpstreamEvent[] {
  const events: UpstreamEvent[] = [];
  const base = { item_id: typeof slot.item.id === "string" ? slot.item.id : "", output_index: index };
  const item: Record<string, unknown> = { ...slot.item, status: "incomplete" };
  for (const list of ["content", "summary"] as const) {
    const parts = slot.item[list];
    if (Array.isArray(parts)) item[list] = closeParts(list, parts, slot, base, events);
  }
  const own = typeof item.type === "string" ? ITEM_STREAMS.get(item.type) : undefined;
  if (own) {
    const text = typeof item[own.field] === "string" ? item[own.field] : "";
    item[own.field] = text;
    if (!slot.finished.has(finishedKey(null, 0, "text"))) {
      events.push({ type: own.done, ...base, [own.field]: text as string });
    }
  }
  events.push({ type: ITEM_DONE, output_index: index, item: structuredClone(item) as never });
  slot.item = item;
  slot.done = true;
  return events;
}

/** The parts of `list` finished with the text they have; pushes the `…done` events not yet sent. */
function closeParts(
  list: PartList,
  parts: readonly unknown[],
  slot: FoldedItem,
  base: { item_id: string; output_index: number },
  events: UpstreamEvent[],
): unknown[] {
  const { done: partDone, index: indexField } = PART_EVENTS[list];
  return parts.map((part, at) => {
    if (!isRecord(part)) return part;
    const stream = typeof part.type === "string" ? PART_STREAMS.get(part.type) : undefined;
    if (!stream || stream.list !== list) return part;
    const text = typeof part[stream.field] === "string" ? (part[stream.field] as string) : "";
    const finished: Record<string, unknown> = { ...part, [stream.field]: text };
    const position = { ...base, [indexField]: at };
    if (!slot.finished.has(finishedKey(list, at, "text"))) {
      events.push({
        type: stream.done,
        ...position,
        [stream.field]: text,
        ...(stream.owner === "output_text" ? { logprobs: [] } : {}),
      });
    }
    if (!slot.finished.has(finishedKey(list, at, "part"))) {
      events.push({ type: partDone, ...position, part: structuredClone(finished) as never });
    }
    return finished;
  });
}
