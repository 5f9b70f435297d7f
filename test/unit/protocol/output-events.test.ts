/**
 * The output-event grammar (src/protocol/output-events.ts): every text stream of the protocol has
 * one entry (its delta and done event, the item list and field it writes), stream keys tell texts
 * apart, and the one fold rebuilds items from their events — parts created when a delta comes
 * before its `…part.added`, `…done` events recorded as finished, events never mutated.
 */
import { describe, expect, it } from "vitest";
import {
  DELTA_EVENTS,
  DONE_EVENTS,
  finishedKey,
  type OutputEvent,
  OutputFold,
  streamKey,
  TEXT_STREAMS,
} from "../../../src/protocol/output-events.ts";

describe("output-event grammar", () => {
  it("has one entry per text stream, keyed by its delta and its done event", () => {
    expect(TEXT_STREAMS.map((s) => [s.delta, s.list, s.field])).toEqual([
      ["response.output_text.delta", "content", "text"],
      ["response.refusal.delta", "content", "refusal"],
      ["response.reasoning_text.delta", "content", "text"],
      ["response.reasoning_summary_text.delta", "summary", "text"],
      ["response.function_call_arguments.delta", null, "arguments"],
      ["response.custom_tool_call_input.delta", null, "input"],
    ]);
    for (const stream of TEXT_STREAMS) {
      expect(DELTA_EVENTS.get(stream.delta)).toBe(stream);
      expect(DONE_EVENTS.get(stream.done)).toBe(stream);
    }
  });

  it("keys a text by its item, its part and its kind", () => {
    const text = DELTA_EVENTS.get("response.output_text.delta")!;
    const reasoning = DELTA_EVENTS.get("response.reasoning_text.delta")!;
    const summary = DONE_EVENTS.get("response.reasoning_summary_text.done")!;
    const delta = (fields: Record<string, unknown>): OutputEvent => ({ type: "x", ...fields });
    expect(streamKey(delta({ output_index: 0, content_index: 1 }), text)).toBe("0/1/text");
    expect(streamKey(delta({ output_index: 0, content_index: 1 }), reasoning)).toBe("0/1/reasoning");
    expect(streamKey(delta({ output_index: 2, summary_index: 0 }), summary)).toBe("2/0/summary");
  });

  it("folds parts, deltas and done events into the item, and records what finished", () => {
    const events: OutputEvent[] = [
      {
        type: "response.output_item.added",
        output_index: 0,
        item: { id: "rs", type: "reasoning", summary: [] },
      },
      { type: "response.reasoning_text.delta", output_index: 0, content_index: 0, delta: "a" },
      { type: "response.reasoning_text.delta", output_index: 0, content_index: 0, delta: "b" },
      { type: "response.reasoning_text.done", output_index: 0, content_index: 0, text: "ab" },
      {
        type: "response.reasoning_summary_part.added",
        output_index: 0,
        summary_index: 0,
        part: { type: "summary_text", text: "" },
      },
      { type: "response.reasoning_summary_text.delta", output_index: 0, summary_index: 0, delta: "S" },
      {
        type: "response.reasoning_summary_part.done",
        output_index: 0,
        summary_index: 0,
        part: { type: "summary_text", text: "S" },
      },
      { type: "response.output_item.added", output_index: 1, item: { id: "ct", type: "custom_tool_call" } },
      { type: "response.custom_tool_call_input.delta", output_index: 1, delta: "ls" },
    ];
    const before = structuredClone(events);
    const fold = new OutputFold();
    for (const event of events) fold.apply(event);
    expect(events).toEqual(before);
    expect(fold.slots[0]?.item).toEqual({
      id: "rs",
      type: "reasoning",
      summary: [{ type: "summary_text", text: "S" }],
      content: [{ type: "reasoning_text", text: "ab" }],
    });
    expect([...(fold.slots[0]?.finished ?? [])]).toEqual([
      finishedKey("content", 0, "text"),
      finishedKey("summary", 0, "part"),
    ]);
    expect(fold.slots[1]).toMatchObject({ item: { type: "custom_tool_call", input: "ls" }, done: false });
  });

  it("leaves a finished item as sent and ignores positions out of range", () => {
    const done = { id: "m", type: "message", content: [{ type: "output_text", text: "x" }] };
    const fold = new OutputFold();
    fold.apply({ type: "response.output_item.done", output_index: 0, item: done });
    fold.apply({ type: "response.output_text.delta", output_index: 0, content_index: 0, delta: "more" });
    fold.apply({ type: "response.output_item.added", output_index: 5_000, item: { type: "message" } });
    fold.apply({ type: "response.output_text.delta", output_index: 0, content_index: -1, delta: "y" });
    expect(fold.slots).toHaveLength(1);
    expect(fold.slots[0]).toMatchObject({ item: done, done: true });
    expect(done.content[0]?.text).toBe("x");
  });
});
