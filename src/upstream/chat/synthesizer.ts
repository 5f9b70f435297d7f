/**
 * Chat Completions chunks → Responses stream events (https://platform.openai.com/docs/api-reference/responses-streaming; ordering as the openai SDK accumulator checks it).
 * Owns the state of one streamed chat completion: the open message item and its content part,
 * the function_call items by tool-call index, the finish reason and the usage.
 * Invariants of the emitted sequence (what the openai SDK accumulator checks):
 * - `response.created`, `response.in_progress` first; the terminal event last, carrying the full
 *   `output` in `output_index` order, `usage` and `incomplete_details`;
 * - `output_item.added` uses `output_index == items so far` (no gaps), every item-scoped event's
 *   `item_id` is its item's id, and each item ends with `output_item.done` (same id/call_id);
 * - a message is closed before the first tool call opens; tool calls stay open until the finish
 *   (servers may interleave fragments of parallel calls) and close in index order;
 * - `sequence_number` is contiguous from 0 (the engine renumbers anyway).
 * Ids are the adapter's own (`msg_…`, `fc_…`, `call_…` when the upstream gives none); the engine
 * re-keys them. Pure: no I/O.
 */
import type { JsonObject } from "../../protocol/json.ts";
import { newItemId, randomToken } from "../../util/ids.ts";
import { outputTextPart, type SynthesisMeta, synthesizedResponse } from "../synthesized-response.ts";
import { UpstreamError, type UpstreamEvent } from "../upstream.ts";
import type { ChatChunk, ChatToolCallDelta, ChatUsage } from "./wire.ts";

export type { SynthesisMeta } from "../synthesized-response.ts";

type PartType = "output_text" | "refusal";

interface MessageState {
  outputIndex: number;
  id: string;
  parts: Array<{ type: PartType; text: string }>;
  /** Index in `parts` of the part receiving deltas, or -1. */
  openPart: number;
}

interface CallState {
  outputIndex: number;
  id: string;
  /** The upstream's tool-call id, or null when it sent none. */
  upstreamId: string | null;
  callId: string;
  name: string;
  arguments: string;
  done: boolean;
}

/**
 * Maps Chat Completions usage to Responses usage (tokens): `prompt_tokens` → `input_tokens`,
 * `prompt_tokens_details.cached_tokens` / `cache_write_tokens` → `input_tokens_details`'s (0 when absent),
 * `completion_tokens` → `output_tokens`, `completion_tokens_details.reasoning_tokens` →
 * `output_tokens_details.reasoning_tokens`, `total_tokens` (sum when absent).
 */
export function toResponsesUsage(usage: ChatUsage): JsonObject {
  const input = usage.prompt_tokens ?? 0;
  const output = usage.completion_tokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: {
      cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
      cache_write_tokens: usage.prompt_tokens_details?.cache_write_tokens ?? 0,
    },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: usage.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: usage.total_tokens ?? input + output,
  };
}

/** The terminal status and `incomplete_details` of a `finish_reason`. */
function terminalOf(finishReason: string): { status: "completed" | "incomplete"; reason: string | null } {
  if (finishReason === "length") return { status: "incomplete", reason: "max_output_tokens" };
  if (finishReason === "content_filter") return { status: "incomplete", reason: "content_filter" };
  // stop, tool_calls, legacy function_call, and server-specific reasons (e.g. "eos") all end normally.
  return { status: "completed", reason: null };
}

/** Synthesizes the Responses events of one chat completion stream. */
export class ChatEventSynthesizer {
  private readonly meta: SynthesisMeta;
  private seq = 0;
  /** Completed output items by output index (filled on `output_item.done`). */
  private readonly done: JsonObject[] = [];
  private nextOutputIndex = 0;
  private message: MessageState | null = null;
  private readonly calls: CallState[] = [];
  private readonly callsByIndex = new Map<number, CallState>();
  private readonly callsById = new Map<string, CallState>();
  private finishReason: string | null = null;
  private usage: JsonObject | null = null;
  private started = false;

  constructor(meta: SynthesisMeta) {
    this.meta = meta;
  }

  /** `response.created` + `response.in_progress` (once; later calls return nothing). */
  start(): UpstreamEvent[] {
    if (this.started) return [];
    this.started = true;
    const out: UpstreamEvent[] = [];
    this.emit(out, "response.created", { response: this.response("in_progress", [], null) });
    this.emit(out, "response.in_progress", { response: this.response("in_progress", [], null) });
    return out;
  }

  /**
   * The events for one chunk. Only choice 0 is used (Deltagate never asks for `n > 1`); deltas
   * after the finish reason are ignored; a chunk with `usage` (normally the last, `choices: []`)
   * records it for the terminal event.
   */
  push(chunk: ChatChunk): UpstreamEvent[] {
    const out = this.start();
    if (chunk.usage) this.usage = toResponsesUsage(chunk.usage);
    for (const choice of chunk.choices ?? []) {
      if ((choice.index ?? 0) !== 0 || this.finishReason !== null) continue;
      const delta = choice.delta;
      if (delta?.content) this.text(out, "output_text", delta.content);
      if (delta?.refusal) this.text(out, "refusal", delta.refusal);
      for (const fragment of delta?.tool_calls ?? []) this.toolFragment(out, fragment);
      if (choice.finish_reason) {
        this.finishReason = choice.finish_reason;
        this.closeAll(out, terminalOf(choice.finish_reason).status);
      }
    }
    return out;
  }

  /**
   * The closing events: open items (if no finish reason came) and the terminal event.
   * @param sawDone the upstream sent `data: [DONE]`: a stream without finish reason still ended
   *   as the server intended, so it completes; without `[DONE]` it was cut off.
   * @throws {UpstreamError} 502 when the stream ended with neither a finish reason nor `[DONE]`.
   */
  end(sawDone: boolean): UpstreamEvent[] {
    const out = this.start();
    if (this.finishReason === null) {
      if (!sawDone) {
        throw new UpstreamError(
          502,
          "upstream_error",
          "The upstream stream ended before the response completed.",
        );
      }
      this.finishReason = "stop";
      this.closeAll(out, "completed");
    }
    const { status, reason } = terminalOf(this.finishReason);
    this.emit(out, `response.${status}`, {
      response: this.response(status, [...this.done], reason ? { reason } : null),
    });
    return out;
  }

  private emit(out: UpstreamEvent[], type: string, fields: JsonObject): void {
    out.push({ type, sequence_number: this.seq++, ...fields });
  }

  private response(status: string, output: JsonObject[], incomplete: JsonObject | null): JsonObject {
    return synthesizedResponse(
      this.meta,
      status,
      output,
      incomplete,
      status === "in_progress" ? null : this.usage,
    );
  }

  private text(out: UpstreamEvent[], type: PartType, delta: string): void {
    let message = this.message;
    if (!message) {
      message = { outputIndex: this.nextOutputIndex++, id: newItemId("message"), parts: [], openPart: -1 };
      this.message = message;
      this.emit(out, "response.output_item.added", {
        output_index: message.outputIndex,
        item: { id: message.id, type: "message", role: "assistant", status: "in_progress", content: [] },
      });
    }
    const scope = { item_id: message.id, output_index: message.outputIndex };
    let part = message.parts[message.openPart];
    if (part?.type !== type) {
      this.closePart(out, message);
      part = { type, text: "" };
      message.openPart = message.parts.push(part) - 1;
      this.emit(out, "response.content_part.added", {
        ...scope,
        content_index: message.openPart,
        part: partJson(type, ""),
      });
    }
    part.text += delta;
    if (type === "output_text") {
      this.emit(out, "response.output_text.delta", {
        ...scope,
        content_index: message.openPart,
        delta,
        logprobs: [],
      });
    } else {
      this.emit(out, "response.refusal.delta", { ...scope, content_index: message.openPart, delta });
    }
  }

  private closePart(out: UpstreamEvent[], message: MessageState): void {
    const part = message.parts[message.openPart];
    if (!part) return;
    const scope = { item_id: message.id, output_index: message.outputIndex, content_index: message.openPart };
    if (part.type === "output_text") {
      this.emit(out, "response.output_text.done", { ...scope, text: part.text, logprobs: [] });
    } else {
      this.emit(out, "response.refusal.done", { ...scope, refusal: part.text });
    }
    this.emit(out, "response.content_part.done", { ...scope, part: partJson(part.type, part.text) });
    message.openPart = -1;
  }

  private closeMessage(out: UpstreamEvent[], status: string): void {
    const message = this.message;
    if (!message) return;
    this.closePart(out, message);
    const item: JsonObject = {
      id: message.id,
      type: "message",
      role: "assistant",
      status,
      content: message.parts.map((part) => partJson(part.type, part.text)),
    };
    this.done[message.outputIndex] = item;
    this.emit(out, "response.output_item.done", { output_index: message.outputIndex, item });
    this.message = null;
  }

  /**
   * The open call a fragment continues: by `index`, else by `id`, else the latest call. A fragment
   * whose `id` differs from that call's upstream id starts a new call (some servers send every
   * complete call as `index: 0`).
   */
  private knownCall(fragment: ChatToolCallDelta): CallState | undefined {
    const index = fragment.index ?? null;
    const id = fragment.id || null;
    const call =
      index !== null ? this.callsByIndex.get(index) : id ? this.callsById.get(id) : this.calls.at(-1);
    if (call && id && call.upstreamId && call.upstreamId !== id) return undefined;
    return call;
  }

  /** Opens a function_call item for a fragment first seen (closing any open message first). */
  private openCall(out: UpstreamEvent[], fragment: ChatToolCallDelta): CallState {
    this.closeMessage(out, "completed");
    const upstreamId = fragment.id || null;
    const call: CallState = {
      outputIndex: this.nextOutputIndex++,
      id: newItemId("function_call"),
      upstreamId,
      callId: upstreamId ?? `call_${randomToken(18)}`,
      name: fragment.function?.name ?? "",
      arguments: "",
      done: false,
    };
    this.calls.push(call);
    if (fragment.index !== null && fragment.index !== undefined) this.callsByIndex.set(fragment.index, call);
    if (upstreamId) this.callsById.set(upstreamId, call);
    this.emit(out, "response.output_item.added", {
      output_index: call.outputIndex,
      item: {
        id: call.id,
        type: "function_call",
        status: "in_progress",
        call_id: call.callId,
        name: call.name,
        arguments: "",
      },
    });
    return call;
  }

  private toolFragment(out: UpstreamEvent[], fragment: ChatToolCallDelta): void {
    const known = this.knownCall(fragment);
    const call = known ?? this.openCall(out, fragment);
    const name = fragment.function?.name;
    // Servers differ: OpenAI sends the name once; some repeat it on every fragment; a few stream
    // it in pieces. Repeats are ignored, pieces appended.
    if (known && name && name !== call.name) call.name += name;
    const args = fragment.function?.arguments;
    if (args) {
      call.arguments += args;
      this.emit(out, "response.function_call_arguments.delta", {
        item_id: call.id,
        output_index: call.outputIndex,
        delta: args,
      });
    }
  }

  /**
   * Closes every open item in output order: an open message always comes after every open call
   * (opening a call closes the message), so calls first, then the message.
   */
  private closeAll(out: UpstreamEvent[], status: string): void {
    for (const call of this.calls) {
      if (call.done) continue;
      call.done = true;
      const scope = { item_id: call.id, output_index: call.outputIndex };
      this.emit(out, "response.function_call_arguments.done", {
        ...scope,
        name: call.name,
        arguments: call.arguments,
      });
      const item: JsonObject = {
        id: call.id,
        type: "function_call",
        status,
        call_id: call.callId,
        name: call.name,
        arguments: call.arguments,
      };
      this.done[call.outputIndex] = item;
      this.emit(out, "response.output_item.done", { output_index: call.outputIndex, item });
    }
    this.closeMessage(out, status);
  }
}

function partJson(type: PartType, text: string): JsonObject {
  return type === "output_text" ? outputTextPart(text) : { type: "refusal", refusal: text };
}
