/**
 * The output of an interrupted response, rebuilt from its events (src/engine/partial-output.ts):
 * finished items as sent, a message cut mid-text `incomplete` with the text so far, other cut items
 * `in_progress` with what their deltas carried; the events themselves are left untouched.
 */
import { describe, expect, it } from "vitest";
import { PartialOutput } from "../../../src/engine/partial-output.ts";

type Event = { type: string; [field: string]: unknown };

function rebuilt(events: Event[]) {
  const output = new PartialOutput();
  for (const event of events) output.apply(event);
  return output.items();
}

const message = (index: number): Event[] => [
  {
    type: "response.output_item.added",
    output_index: index,
    item: { id: `msg_${index}`, type: "message", role: "assistant", status: "in_progress", content: [] },
  },
  {
    type: "response.content_part.added",
    output_index: index,
    content_index: 0,
    item_id: `msg_${index}`,
    part: { type: "output_text", text: "", annotations: [] },
  },
  {
    type: "response.output_text.delta",
    output_index: index,
    content_index: 0,
    item_id: `msg_${index}`,
    delta: "Hel",
  },
  {
    type: "response.output_text.delta",
    output_index: index,
    content_index: 0,
    item_id: `msg_${index}`,
    delta: "lo",
  },
];

describe("PartialOutput", () => {
  it("cuts a message where its deltas stopped and marks it incomplete", () => {
    expect(rebuilt(message(0))).toEqual([
      {
        id: "msg_0",
        type: "message",
        role: "assistant",
        status: "incomplete",
        content: [{ type: "output_text", text: "Hello", annotations: [] }],
      },
    ]);
  });

  it("keeps finished items as sent and a call cut mid-arguments in_progress", () => {
    const done = { id: "msg_0", type: "message", role: "assistant", status: "completed", content: [] };
    const items = rebuilt([
      ...message(0),
      { type: "response.output_item.done", output_index: 0, item: done },
      {
        type: "response.output_item.added",
        output_index: 1,
        item: {
          id: "fc_1",
          type: "function_call",
          status: "in_progress",
          call_id: "call_1",
          name: "sh",
          arguments: "",
        },
      },
      { type: "response.function_call_arguments.delta", output_index: 1, item_id: "fc_1", delta: '{"cmd":' },
      { type: "keepalive", sequence_number: 9 },
    ]);
    expect(items).toEqual([
      done,
      {
        id: "fc_1",
        type: "function_call",
        status: "in_progress",
        call_id: "call_1",
        name: "sh",
        arguments: '{"cmd":',
      },
    ]);
  });

  it("rebuilds reasoning summaries and reasoning text, and refusals", () => {
    const items = rebuilt([
      {
        type: "response.output_item.added",
        output_index: 0,
        item: { id: "rs_0", type: "reasoning", summary: [] },
      },
      {
        type: "response.reasoning_summary_part.added",
        output_index: 0,
        summary_index: 0,
        part: { type: "summary_text", text: "" },
      },
      { type: "response.reasoning_summary_text.delta", output_index: 0, summary_index: 0, delta: "Think" },
      { type: "response.reasoning_text.delta", output_index: 0, content_index: 0, delta: "step 1" },
      {
        type: "response.output_item.added",
        output_index: 1,
        item: { id: "msg_1", type: "message", role: "assistant", content: [] },
      },
      { type: "response.refusal.delta", output_index: 1, content_index: 0, delta: "No." },
    ]);
    expect(items).toEqual([
      {
        id: "rs_0",
        type: "reasoning",
        status: "in_progress",
        summary: [{ type: "summary_text", text: "Think" }],
        content: [{ type: "reasoning_text", text: "step 1" }],
      },
      {
        id: "msg_1",
        type: "message",
        role: "assistant",
        status: "incomplete",
        content: [{ type: "refusal", refusal: "No." }],
      },
    ]);
  });

  it("never changes the events it reads, and ignores out-of-range positions", () => {
    const events = message(0);
    const before = structuredClone(events);
    const output = new PartialOutput();
    for (const event of events) output.apply(event);
    output.apply({ type: "response.output_item.added", output_index: 1e9, item: { type: "message" } });
    output.apply({ type: "response.output_text.delta", output_index: -1, content_index: 0, delta: "x" });
    expect(events).toEqual(before);
    expect(output.items()).toHaveLength(1);
  });
});
