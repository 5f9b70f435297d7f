/**
 * The released output of a response and the events that close it for `content_filter`
 * (src/safety/released-output.ts): every item the client saw start is finished with exactly the
 * text it was sent — message text and refusals, reasoning text and summaries, call arguments —
 * no `…done` event the client already has is sent again, finished items are kept as sent, and the
 * terminal `response.incomplete` lists exactly the closed output.
 */
import { describe, expect, it } from "vitest";
import { ReleasedOutput } from "../../../src/safety/released-output.ts";
import type { UpstreamEvent } from "../../../src/upstream/upstream.ts";

function closed(events: UpstreamEvent[]): UpstreamEvent[] {
  const released = new ReleasedOutput();
  for (const event of events) released.observe(event);
  return released.closeForContentFilter();
}

const at = (output_index: number, item_id: string) => ({ output_index, item_id });

describe("ReleasedOutput", () => {
  it("closes a message cut mid-text with the text sent, and ends incomplete (content_filter)", () => {
    const events = closed([
      {
        type: "response.output_item.added",
        output_index: 0,
        item: { id: "m", type: "message", content: [] },
      },
      {
        type: "response.content_part.added",
        ...at(0, "m"),
        content_index: 0,
        part: { type: "output_text", text: "", annotations: [] },
      },
      { type: "response.output_text.delta", ...at(0, "m"), content_index: 0, delta: "Hel" },
      { type: "response.output_text.delta", ...at(0, "m"), content_index: 0, delta: "lo" },
    ]);
    const part = { type: "output_text", text: "Hello", annotations: [] };
    const item = { id: "m", type: "message", status: "incomplete", content: [part] };
    expect(events).toEqual([
      { type: "response.output_text.done", ...at(0, "m"), content_index: 0, text: "Hello", logprobs: [] },
      { type: "response.content_part.done", ...at(0, "m"), content_index: 0, part },
      { type: "response.output_item.done", output_index: 0, item },
      {
        type: "response.incomplete",
        response: {
          object: "response",
          status: "incomplete",
          output: [item],
          incomplete_details: { reason: "content_filter" },
          usage: null,
        },
      },
    ]);
  });

  it("closes reasoning text and summary parts, and call arguments, with what was sent", () => {
    const events = closed([
      {
        type: "response.output_item.added",
        output_index: 0,
        item: { id: "rs", type: "reasoning", summary: [], content: [] },
      },
      {
        type: "response.reasoning_summary_part.added",
        ...at(0, "rs"),
        summary_index: 0,
        part: { type: "summary_text", text: "" },
      },
      { type: "response.reasoning_summary_text.delta", ...at(0, "rs"), summary_index: 0, delta: "Plan" },
      { type: "response.reasoning_text.delta", ...at(0, "rs"), content_index: 0, delta: "step one" },
      {
        type: "response.output_item.added",
        output_index: 1,
        item: { id: "fc", type: "function_call", call_id: "c1", name: "sh", arguments: "" },
      },
      { type: "response.function_call_arguments.delta", ...at(1, "fc"), delta: '{"cmd":"l' },
    ]);
    const summary = { type: "summary_text", text: "Plan" };
    const reasoning = { type: "reasoning_text", text: "step one" };
    expect(events.slice(0, -1)).toEqual([
      { type: "response.reasoning_text.done", ...at(0, "rs"), content_index: 0, text: "step one" },
      { type: "response.content_part.done", ...at(0, "rs"), content_index: 0, part: reasoning },
      { type: "response.reasoning_summary_text.done", ...at(0, "rs"), summary_index: 0, text: "Plan" },
      { type: "response.reasoning_summary_part.done", ...at(0, "rs"), summary_index: 0, part: summary },
      {
        type: "response.output_item.done",
        output_index: 0,
        item: { id: "rs", type: "reasoning", status: "incomplete", summary: [summary], content: [reasoning] },
      },
      { type: "response.function_call_arguments.done", ...at(1, "fc"), arguments: '{"cmd":"l' },
      {
        type: "response.output_item.done",
        output_index: 1,
        item: {
          id: "fc",
          type: "function_call",
          call_id: "c1",
          name: "sh",
          arguments: '{"cmd":"l',
          status: "incomplete",
        },
      },
    ]);
  });

  it("sends no …done event the client already has, and keeps finished items as sent", () => {
    const done = {
      id: "m0",
      type: "message",
      status: "completed",
      content: [{ type: "output_text", text: "First.", annotations: [] }],
    };
    const events = closed([
      {
        type: "response.output_item.added",
        output_index: 0,
        item: { id: "m0", type: "message", content: [] },
      },
      { type: "response.output_item.done", output_index: 0, item: done },
      {
        type: "response.output_item.added",
        output_index: 1,
        item: { id: "m1", type: "message", content: [] },
      },
      { type: "response.output_text.delta", ...at(1, "m1"), content_index: 0, delta: "Whole" },
      { type: "response.output_text.done", ...at(1, "m1"), content_index: 0, text: "Whole" },
    ]);
    const part = { type: "output_text", text: "Whole", annotations: [] };
    expect(events.map((e) => e.type)).toEqual([
      "response.content_part.done",
      "response.output_item.done",
      "response.incomplete",
    ]);
    expect(events[0]).toEqual({ type: "response.content_part.done", ...at(1, "m1"), content_index: 0, part });
    expect(events[2]?.response).toMatchObject({
      output: [done, { id: "m1", type: "message", status: "incomplete", content: [part] }],
    });
  });

  it("ends with an empty output when nothing was released", () => {
    expect(closed([{ type: "response.created", response: { id: "r" } }])).toEqual([
      {
        type: "response.incomplete",
        response: {
          object: "response",
          status: "incomplete",
          output: [],
          incomplete_details: { reason: "content_filter" },
          usage: null,
        },
      },
    ]);
  });
});
