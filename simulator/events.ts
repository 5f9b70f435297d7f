/**
 * Turns a planned turn into the Responses stream event sequence of spec §3.4, with the time
 * offset at which each event is due: `response.created` → `response.in_progress` → per output
 * item (added → deltas → done; a `reasoning` item: added → done) in output_index order → terminal
 * event with the full output and usage. `sequence_number` starts at 0 and is contiguous. Pure: no I/O, no clock.
 */
import type {
  Response,
  ResponseFunctionToolCall,
  ResponseOutputItem,
  ResponseOutputMessage,
  ResponseOutputText,
  ResponseStreamEvent,
  ResponseUsage,
} from "openai/resources/responses/responses";
import { newId } from "./ids.ts";
import type { PlannedItem } from "./policy.ts";
import type { WireResponse } from "./response-object.ts";
import { estimateTokens } from "./tokens.ts";

/** Code points per text/arguments delta (≈ 4 tokens of ASCII). */
export const DELTA_CHARS = 16;

/** A stream event without its `sequence_number` (assigned when the sequence is built). */
type EventBody = ResponseStreamEvent extends infer E
  ? E extends unknown
    ? Omit<E, "sequence_number">
    : never
  : never;

/** The SDK types `Response` with the client-computed `output_text`; the wire object lacks it. */
function asSdkResponse(response: WireResponse): Response {
  return response as Response;
}

/** One event and when it is due, in ms after the request started. */
export interface EventStep {
  atMs: number;
  event: ResponseStreamEvent;
}

/** Splits `text` into chunks of `size` code points (never splits a surrogate pair). */
export function chunkText(text: string, size = DELTA_CHARS): string[] {
  const cps = Array.from(text);
  const chunks: string[] = [];
  for (let i = 0; i < cps.length; i += size) chunks.push(cps.slice(i, i + size).join(""));
  return chunks;
}

/** The completed wire output item for a planned item (assigns `msg_`/`fc_` ids). */
export function toOutputItem(item: PlannedItem): ResponseOutputItem {
  if (item.type === "message") {
    const message: ResponseOutputMessage = {
      id: newId("msg_"),
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: item.text, annotations: [], logprobs: [] }],
    };
    return message;
  }
  const call: ResponseFunctionToolCall = {
    id: newId("fc_"),
    type: "function_call",
    status: "completed",
    call_id: item.callId,
    name: item.name,
    arguments: item.arguments,
  };
  return call;
}

/** Output tokens of completed output items (message text + function arguments). */
export function outputTokens(items: ResponseOutputItem[]): number {
  let total = 0;
  for (const item of items) {
    if (item.type === "message") {
      for (const part of item.content)
        total += estimateTokens(part.type === "output_text" ? part.text : part.refusal);
    } else if (item.type === "function_call") {
      total += estimateTokens(item.arguments);
    } else if (item.type === "compaction") {
      total += estimateTokens(item.encrypted_content);
    }
  }
  return total;
}

/** Inputs of `buildEventSteps`. */
export interface EventPlan {
  /** Initial response (status in_progress, empty output, usage undefined). */
  initial: WireResponse;
  /** Completed output items, in order. */
  output: ResponseOutputItem[];
  /** Terminal status: completed, or incomplete (max_output_tokens). */
  finalStatus: "completed" | "incomplete";
  usage: ResponseUsage;
  /** When the first event is due, ms. */
  firstEventAtMs: number;
  /** Decode time of one token, ms. */
  msPerToken: number;
  /** Code points per text/arguments delta (default `DELTA_CHARS`). */
  deltaChars?: number;
}

/** Builds the full event sequence; the last step is the terminal event. */
export function buildEventSteps(plan: EventPlan): EventStep[] {
  const steps: EventStep[] = [];
  let t = plan.firstEventAtMs;
  const push = (event: EventBody): void => {
    steps.push({ atMs: t, event: { ...event, sequence_number: steps.length } as ResponseStreamEvent });
  };
  const snapshot = asSdkResponse({ ...plan.initial, output: [] });
  push({ type: "response.created", response: snapshot });
  push({ type: "response.in_progress", response: snapshot });

  plan.output.forEach((item, output_index) => {
    const id = item.type === "message" || item.type === "function_call" ? (item.id ?? "") : "";
    if (item.type === "message") {
      const part = item.content[0];
      const text = part?.type === "output_text" ? part.text : "";
      push({
        type: "response.output_item.added",
        output_index,
        item: { ...item, status: "in_progress", content: [] },
      });
      const emptyPart: ResponseOutputText = { type: "output_text", text: "", annotations: [], logprobs: [] };
      push({
        type: "response.content_part.added",
        item_id: id,
        output_index,
        content_index: 0,
        part: emptyPart,
      });
      for (const delta of chunkText(text, plan.deltaChars)) {
        t += estimateTokens(delta) * plan.msPerToken;
        push({
          type: "response.output_text.delta",
          item_id: id,
          output_index,
          content_index: 0,
          delta,
          logprobs: [],
        });
      }
      push({
        type: "response.output_text.done",
        item_id: id,
        output_index,
        content_index: 0,
        text,
        logprobs: [],
      });
      push({
        type: "response.content_part.done",
        item_id: id,
        output_index,
        content_index: 0,
        part: { ...emptyPart, text },
      });
    } else if (item.type === "compaction") {
      // A compaction item arrives whole (its encrypted content is not streamed).
      push({ type: "response.output_item.added", output_index, item });
    } else if (item.type === "reasoning") {
      // `encrypted_content` (when included) arrives with the finished item.
      const { encrypted_content: _encrypted, ...opening } = item;
      push({ type: "response.output_item.added", output_index, item: opening });
    } else if (item.type === "function_call") {
      push({
        type: "response.output_item.added",
        output_index,
        item: { ...item, status: "in_progress", arguments: "" },
      });
      for (const delta of chunkText(item.arguments, plan.deltaChars)) {
        t += estimateTokens(delta) * plan.msPerToken;
        push({ type: "response.function_call_arguments.delta", item_id: id, output_index, delta });
      }
      push({
        type: "response.function_call_arguments.done",
        item_id: id,
        output_index,
        arguments: item.arguments,
        // OpenAI sends `name` here (spec §3.2); the SDK type omits it, hence the spread.
        ...{ name: item.name },
      });
    }
    push({ type: "response.output_item.done", output_index, item });
  });

  const final: WireResponse = {
    ...plan.initial,
    status: plan.finalStatus,
    output: plan.output,
    usage: plan.usage,
    completed_at: plan.finalStatus === "completed" ? Math.floor(Date.now() / 1000) : null,
    incomplete_details: plan.finalStatus === "incomplete" ? { reason: "max_output_tokens" } : null,
  };
  const terminalType = plan.finalStatus === "completed" ? "response.completed" : "response.incomplete";
  push({ type: terminalType, response: asSdkResponse(final) });
  return steps;
}

/**
 * Index of the first step NOT sent when simulating a mid-stream failure: right after the
 * third delta, or (with fewer deltas) just before the terminal event; at least 2 (created and
 * in_progress are always sent).
 */
export function midstreamCutIndex(steps: EventStep[]): number {
  let deltas = 0;
  for (let i = 0; i < steps.length; i++) {
    if (steps[i]?.event.type.endsWith(".delta")) {
      deltas++;
      if (deltas === 3) return i + 1;
    }
  }
  return Math.max(2, steps.length - 1);
}
