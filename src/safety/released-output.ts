/**
 * What of a response's output has actually been released to the client, rebuilt from the
 * released events, and the events that close it when output checks stop a response. Owns the
 * shape of a response cut by `content_filter`: every item the client saw start is finished with
 * exactly the text it saw (`…text.done`, `content_part.done`, `output_item.done` with status
 * `incomplete`), then `response.incomplete` with `incomplete_details.reason: "content_filter"`.
 * Invariant: no closing event carries a character the client was not already sent.
 * Source: https://platform.openai.com/docs/api-reference/responses-streaming
 */
import type { UpstreamEvent } from "../upstream/upstream.ts";

type JsonObject = { [field: string]: unknown };

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** One text part of an item as released (message content, reasoning summary). */
interface ReleasedPart {
  part: JsonObject;
  /** The part's text field: `text` or `refusal`. */
  field: "text" | "refusal";
  text: string;
  done: boolean;
}

/** One output item as released. */
interface ReleasedItem {
  item: JsonObject;
  done: boolean;
  /** Message content parts by `content_index`. */
  parts: Map<number, ReleasedPart>;
  /** Reasoning summary parts by `summary_index`. */
  summaries: Map<number, ReleasedPart>;
  /** `function_call.arguments` / `custom_tool_call.input` released so far. */
  argument: string;
}

const num = (value: unknown) => (typeof value === "number" ? value : -1);
const str = (value: unknown) => (typeof value === "string" ? value : "");

/** The released output of one response. */
export class ReleasedOutput {
  private readonly items = new Map<number, ReleasedItem>();

  /** Records an event that was released to the client. */
  observe(event: UpstreamEvent): void {
    const index = num(event.output_index);
    if (event.type === "response.output_item.added" && isObject(event.item)) {
      this.items.set(index, {
        item: { ...event.item },
        done: false,
        parts: new Map(),
        summaries: new Map(),
        argument: str(event.item.arguments ?? event.item.input),
      });
      return;
    }
    const entry = this.items.get(index);
    if (!entry) return;
    switch (event.type) {
      case "response.output_item.done":
        entry.done = true;
        if (isObject(event.item)) entry.item = { ...event.item };
        break;
      case "response.content_part.added":
        if (isObject(event.part)) {
          const field = event.part.type === "refusal" ? "refusal" : "text";
          entry.parts.set(num(event.content_index), {
            part: { ...event.part },
            field,
            text: "",
            done: false,
          });
        }
        break;
      case "response.output_text.delta":
      case "response.refusal.delta": {
        const part = entry.parts.get(num(event.content_index));
        if (part) part.text += str(event.delta);
        break;
      }
      case "response.content_part.done": {
        const part = entry.parts.get(num(event.content_index));
        if (part) part.done = true;
        break;
      }
      case "response.reasoning_summary_part.added":
        if (isObject(event.part)) {
          entry.summaries.set(num(event.summary_index), {
            part: { ...event.part },
            field: "text",
            text: "",
            done: false,
          });
        }
        break;
      case "response.reasoning_summary_text.delta": {
        const part = entry.summaries.get(num(event.summary_index));
        if (part) part.text += str(event.delta);
        break;
      }
      case "response.reasoning_summary_part.done": {
        const part = entry.summaries.get(num(event.summary_index));
        if (part) part.done = true;
        break;
      }
      case "response.function_call_arguments.delta":
      case "response.custom_tool_call_input.delta":
        entry.argument += str(event.delta);
        break;
      default:
        break;
    }
  }

  /**
   * The events that finish every released item that is not finished, then the terminal
   * `response.incomplete` (`content_filter`) whose output is exactly what was released.
   */
  closeForContentFilter(): UpstreamEvent[] {
    const events: UpstreamEvent[] = [];
    const output: JsonObject[] = [];
    for (const index of [...this.items.keys()].sort((a, b) => a - b)) {
      const entry = this.items.get(index);
      if (!entry) continue;
      if (!entry.done) events.push(...this.close(index, entry));
      output.push(entry.item);
    }
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

  /** Closing events of one unfinished item; leaves `entry.item` as the closed item. */
  private close(index: number, entry: ReleasedItem): UpstreamEvent[] {
    const events: UpstreamEvent[] = [];
    const itemId = str(entry.item.id);
    const base = { item_id: itemId, output_index: index };
    const item: JsonObject = { ...entry.item, status: "incomplete" };
    if (item.type === "message") {
      const content: JsonObject[] = [];
      for (const [contentIndex, part] of [...entry.parts].sort(([a], [b]) => a - b)) {
        const finished = { ...part.part, [part.field]: part.text };
        if (!part.done) {
          events.push(
            part.field === "refusal"
              ? { type: "response.refusal.done", ...base, content_index: contentIndex, refusal: part.text }
              : {
                  type: "response.output_text.done",
                  ...base,
                  content_index: contentIndex,
                  text: part.text,
                  logprobs: [],
                },
            {
              type: "response.content_part.done",
              ...base,
              content_index: contentIndex,
              part: finished as never,
            },
          );
        }
        content.push(finished);
      }
      item.content = content as never;
    } else if (item.type === "function_call") {
      events.push({ type: "response.function_call_arguments.done", ...base, arguments: entry.argument });
      item.arguments = entry.argument;
    } else if (item.type === "custom_tool_call") {
      events.push({ type: "response.custom_tool_call_input.done", ...base, input: entry.argument });
      item.input = entry.argument;
    } else if (item.type === "reasoning") {
      const summary: JsonObject[] = [];
      for (const [summaryIndex, part] of [...entry.summaries].sort(([a], [b]) => a - b)) {
        const finished = { ...part.part, text: part.text };
        if (!part.done) {
          events.push(
            {
              type: "response.reasoning_summary_text.done",
              ...base,
              summary_index: summaryIndex,
              text: part.text,
            },
            {
              type: "response.reasoning_summary_part.done",
              ...base,
              summary_index: summaryIndex,
              part: finished as never,
            },
          );
        }
        summary.push(finished);
      }
      item.summary = summary as never;
    }
    events.push({ type: "response.output_item.done", output_index: index, item: item as never });
    entry.item = item;
    entry.done = true;
    return events;
  }
}
