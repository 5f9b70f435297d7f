/**
 * Anthropic stream events → Responses stream events (docs/upstreams.md, docs/anthropic.md).
 * Owns the state of one streamed Message: the content blocks by index, the open message item,
 * the stop reason and the usage. Mapping:
 * - `message_start` → `response.created`, `response.in_progress`;
 * - consecutive `text` blocks → one `message` item, a content part each (`text_delta` →
 *   `response.output_text.delta`);
 * - `tool_use` → a `function_call` item (`call_id` = the block's id; `input_json_delta` →
 *   `response.function_call_arguments.delta`; no input at all → `{}`; a flattened namespace
 *   member's name → `name` and `namespace`: src/upstream/tool-namespaces.ts);
 * - a run of consecutive `thinking` / `redacted_thinking` blocks → one `reasoning` item (a
 *   reasoning item must be followed by the model item it belongs to: src/engine/history-repair.ts)
 *   with a summary part per `thinking` block (`thinking_delta` →
 *   `response.reasoning_summary_text.delta`) and the blocks, with their `signature` / `data`, as
 *   its `encrypted_content` (thinking-blocks.ts);
 * - `message_delta` → stop reason and usage; `message_stop` → the terminal event: `end_turn`,
 *   `stop_sequence`, `tool_use`, `pause_turn` → `completed`; `max_tokens` and
 *   `model_context_window_exceeded` → `incomplete` (`max_output_tokens`); `refusal` →
 *   `incomplete` (`content_filter`).
 * Usage: `input_tokens` = Anthropic's input + cache read + cache creation (what Responses counts
 * as input), `input_tokens_details.cached_tokens` = `cache_read_input_tokens`,
 * `input_tokens_details.cache_write_tokens` = `cache_creation_input_tokens` (the `openai` SDK's
 * `ResponseUsage` requires it).
 * Invariants: as the Chat Completions synthesizer's (items opened in `output_index` order, each
 * closed with `output_item.done`, contiguous `sequence_number`s); ids are the adapter's own
 * (the engine re-keys them; a reasoning item keeps its id). Pure: no I/O.
 * Source: https://docs.anthropic.com/en/docs/build-with-claude/streaming,
 * https://docs.anthropic.com/en/api/messages (`stop_reason`, `usage`),
 * https://platform.openai.com/docs/api-reference/responses-streaming.
 */
import type { JsonObject } from "../../protocol/json.ts";
import { newItemId } from "../../util/ids.ts";
import { outputTextPart, type SynthesisMeta, synthesizedResponse } from "../synthesized-response.ts";
import { callFields, type NamespacedName, namespacedNames } from "../tool-namespaces.ts";
import { brokenStream } from "../translated-stream.ts";
import type { UpstreamEvent } from "../upstream.ts";
import { sealThinking, type ThinkingBlock } from "./thinking-blocks.ts";
import type { AnthropicUsage, StreamEvent } from "./wire.ts";

export type { SynthesisMeta } from "../synthesized-response.ts";

interface MessageState {
  outputIndex: number;
  id: string;
  texts: string[];
}

interface ReasoningState {
  outputIndex: number;
  id: string;
  blocks: ThinkingBlock[];
  summaries: string[];
}

type BlockState =
  | { kind: "text"; message: MessageState; part: number }
  | {
      kind: "tool";
      outputIndex: number;
      id: string;
      callId: string;
      /** `name` (and `namespace`) as the client reads them. */
      names: { name: string; namespace?: string };
      args: string;
    }
  | { kind: "thinking"; reasoning: ReasoningState; summary: number; text: string; signature: string }
  | { kind: "redacted"; reasoning: ReasoningState; data: string };

/** Anthropic usage → Responses usage (see the module header). */
export function toResponsesUsage(usage: AnthropicUsage): JsonObject {
  const read = usage.cache_read_input_tokens ?? 0;
  const written = usage.cache_creation_input_tokens ?? 0;
  const input = (usage.input_tokens ?? 0) + read + written;
  const output = usage.output_tokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: read, cache_write_tokens: written },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
  };
}

function terminalOf(stopReason: string | null): {
  status: "completed" | "incomplete";
  reason: string | null;
} {
  if (stopReason === "max_tokens" || stopReason === "model_context_window_exceeded") {
    return { status: "incomplete", reason: "max_output_tokens" };
  }
  if (stopReason === "refusal") return { status: "incomplete", reason: "content_filter" };
  return { status: "completed", reason: null };
}

/** Synthesizes the Responses events of one Anthropic message stream. */
export class AnthropicEventSynthesizer {
  private readonly meta: SynthesisMeta;
  private seq = 0;
  private readonly done: JsonObject[] = [];
  private nextOutputIndex = 0;
  private message: MessageState | null = null;
  private reasoning: ReasoningState | null = null;
  private readonly blocks = new Map<number, BlockState>();
  private usage: AnthropicUsage = {};
  private stopReason: string | null = null;
  private started = false;
  private stopped = false;
  /** The turn's namespace members by their flattened name. */
  private readonly namespaced: ReadonlyMap<string, NamespacedName>;

  constructor(meta: SynthesisMeta) {
    this.meta = meta;
    this.namespaced = namespacedNames(meta.settings.tools);
  }

  /** True once `message_stop` arrived. */
  get finished(): boolean {
    return this.stopped;
  }

  /**
   * The events for one Anthropic event (`ping` and unknown deltas give none).
   * @throws {UpstreamError} 502 for an event out of order (a block before `message_start`, a
   *   delta for an unknown block, a content block type Deltagate never asks for).
   */
  push(event: StreamEvent): UpstreamEvent[] {
    const out: UpstreamEvent[] = [];
    if (event.type === "ping") return out;
    if (event.type === "message_start") {
      if (this.started) throw brokenStream("The upstream sent message_start twice.");
      this.started = true;
      this.usage = { ...(event.message.usage ?? {}) };
      this.emit(out, "response.created", { response: this.response("in_progress", null) });
      this.emit(out, "response.in_progress", { response: this.response("in_progress", null) });
      return out;
    }
    if (!this.started || this.stopped) throw brokenStream(`The upstream sent ${event.type} out of order.`);
    switch (event.type) {
      case "content_block_start":
        this.startBlock(out, event.index, event.content_block);
        break;
      case "content_block_delta":
        this.delta(out, event.index, event.delta);
        break;
      case "content_block_stop":
        this.stopBlock(out, event.index);
        break;
      case "message_delta":
        if (event.delta?.stop_reason) this.stopReason = event.delta.stop_reason;
        for (const [key, value] of Object.entries(event.usage ?? {})) {
          if (typeof value === "number") (this.usage as Record<string, number>)[key] = value;
        }
        break;
      case "message_stop": {
        this.closeMessage(out, terminalOf(this.stopReason).status);
        this.closeReasoning(out);
        this.stopped = true;
        const { status, reason } = terminalOf(this.stopReason);
        this.emit(out, `response.${status}`, { response: this.response(status, reason ? { reason } : null) });
        break;
      }
      default:
        break; // `error` is handled by the stream reader
    }
    return out;
  }

  private emit(out: UpstreamEvent[], type: string, fields: JsonObject): void {
    out.push({ type, sequence_number: this.seq++, ...fields });
  }

  private response(status: string, incomplete: JsonObject | null): JsonObject {
    const inProgress = status === "in_progress";
    const usage = inProgress ? null : toResponsesUsage(this.usage);
    return synthesizedResponse(this.meta, status, inProgress ? [] : [...this.done], incomplete, usage);
  }

  private startBlock(
    out: UpstreamEvent[],
    index: number,
    block: Extract<StreamEvent, { type: "content_block_start" }>["content_block"],
  ): void {
    if (this.blocks.has(index)) throw brokenStream(`The upstream started content block ${index} twice.`);
    if (block.type === "text") {
      this.closeReasoning(out);
      let message = this.message;
      if (!message) {
        message = { outputIndex: this.nextOutputIndex++, id: newItemId("message"), texts: [] };
        this.message = message;
        this.emit(out, "response.output_item.added", {
          output_index: message.outputIndex,
          item: { id: message.id, type: "message", role: "assistant", status: "in_progress", content: [] },
        });
      }
      const part = message.texts.push(block.text ?? "") - 1;
      this.blocks.set(index, { kind: "text", message, part });
      this.emit(out, "response.content_part.added", {
        item_id: message.id,
        output_index: message.outputIndex,
        content_index: part,
        part: outputTextPart(""),
      });
      if (block.text) this.textDelta(out, message, part, block.text, false);
      return;
    }
    this.closeMessage(out, "completed");
    if (block.type === "tool_use") {
      this.closeReasoning(out);
      const outputIndex = this.nextOutputIndex++;
      const state: BlockState = {
        kind: "tool",
        outputIndex,
        id: newItemId("function_call"),
        callId: block.id ?? "",
        names: callFields(block.name ?? "", this.namespaced),
        args: "",
      };
      this.blocks.set(index, state);
      this.emit(out, "response.output_item.added", {
        output_index: outputIndex,
        item: {
          id: state.id,
          type: "function_call",
          status: "in_progress",
          call_id: state.callId,
          ...state.names,
          arguments: "",
        },
      });
      return;
    }
    if (block.type === "thinking" || block.type === "redacted_thinking") {
      let reasoning = this.reasoning;
      if (!reasoning) {
        reasoning = {
          outputIndex: this.nextOutputIndex++,
          id: newItemId("reasoning"),
          blocks: [],
          summaries: [],
        };
        this.reasoning = reasoning;
        this.emit(out, "response.output_item.added", {
          output_index: reasoning.outputIndex,
          item: { id: reasoning.id, type: "reasoning", summary: [] },
        });
      }
      if (block.type === "redacted_thinking") {
        this.blocks.set(index, { kind: "redacted", reasoning, data: block.data ?? "" });
        return;
      }
      const summary = reasoning.summaries.push("") - 1;
      this.blocks.set(index, {
        kind: "thinking",
        reasoning,
        summary,
        text: "",
        signature: block.signature ?? "",
      });
      this.emit(out, "response.reasoning_summary_part.added", {
        item_id: reasoning.id,
        output_index: reasoning.outputIndex,
        summary_index: summary,
        part: { type: "summary_text", text: "" },
      });
      if (block.thinking) this.delta(out, index, { type: "thinking_delta", thinking: block.thinking });
      return;
    }
    throw brokenStream(
      `The upstream sent a '${block.type}' content block, which Deltagate does not ask for.`,
    );
  }

  private textDelta(
    out: UpstreamEvent[],
    message: MessageState,
    part: number,
    delta: string,
    append = true,
  ): void {
    if (append) message.texts[part] += delta;
    this.emit(out, "response.output_text.delta", {
      item_id: message.id,
      output_index: message.outputIndex,
      content_index: part,
      delta,
      logprobs: [],
    });
  }

  private delta(
    out: UpstreamEvent[],
    index: number,
    delta: Extract<StreamEvent, { type: "content_block_delta" }>["delta"],
  ): void {
    const block = this.blocks.get(index);
    if (!block) throw brokenStream(`The upstream sent a delta for unknown content block ${index}.`);
    if (block.kind === "text" && delta.type === "text_delta" && delta.text) {
      this.textDelta(out, block.message, block.part, delta.text);
    } else if (block.kind === "tool" && delta.type === "input_json_delta" && delta.partial_json) {
      block.args += delta.partial_json;
      this.emit(out, "response.function_call_arguments.delta", {
        item_id: block.id,
        output_index: block.outputIndex,
        delta: delta.partial_json,
      });
    } else if (block.kind === "thinking" && delta.type === "thinking_delta" && delta.thinking) {
      block.text += delta.thinking;
      this.emit(out, "response.reasoning_summary_text.delta", {
        item_id: block.reasoning.id,
        output_index: block.reasoning.outputIndex,
        summary_index: block.summary,
        delta: delta.thinking,
      });
    } else if (block.kind === "thinking" && delta.type === "signature_delta" && delta.signature) {
      block.signature += delta.signature;
    }
    // citations_delta and other annotations: not carried (Deltagate sends no citation sources).
  }

  private stopBlock(out: UpstreamEvent[], index: number): void {
    const block = this.blocks.get(index);
    if (!block) throw brokenStream(`The upstream stopped unknown content block ${index}.`);
    if (block.kind === "text") {
      const scope = {
        item_id: block.message.id,
        output_index: block.message.outputIndex,
        content_index: block.part,
      };
      const text = block.message.texts[block.part] ?? "";
      this.emit(out, "response.output_text.done", { ...scope, text, logprobs: [] });
      this.emit(out, "response.content_part.done", { ...scope, part: outputTextPart(text) });
      return;
    }
    if (block.kind === "tool") {
      const args = block.args === "" ? "{}" : block.args;
      const scope = { item_id: block.id, output_index: block.outputIndex };
      this.emit(out, "response.function_call_arguments.done", {
        ...scope,
        name: block.names.name,
        arguments: args,
      });
      const item = {
        id: block.id,
        type: "function_call",
        status: "completed",
        call_id: block.callId,
        ...block.names,
        arguments: args,
      };
      this.finish(out, block.outputIndex, item);
      return;
    }
    if (block.kind === "thinking") {
      const { reasoning } = block;
      const scope = {
        item_id: reasoning.id,
        output_index: reasoning.outputIndex,
        summary_index: block.summary,
      };
      reasoning.summaries[block.summary] = block.text;
      this.emit(out, "response.reasoning_summary_text.done", { ...scope, text: block.text });
      this.emit(out, "response.reasoning_summary_part.done", {
        ...scope,
        part: { type: "summary_text", text: block.text },
      });
      reasoning.blocks.push({ type: "thinking", thinking: block.text, signature: block.signature });
      return;
    }
    block.reasoning.blocks.push({ type: "redacted_thinking", data: block.data });
  }

  /** Closes the open reasoning item: its summaries, and its blocks as `encrypted_content`. */
  private closeReasoning(out: UpstreamEvent[]): void {
    const reasoning = this.reasoning;
    if (!reasoning) return;
    this.reasoning = null;
    this.finish(out, reasoning.outputIndex, {
      id: reasoning.id,
      type: "reasoning",
      summary: reasoning.summaries.map((text) => ({ type: "summary_text", text })),
      encrypted_content: sealThinking(reasoning.blocks),
    });
  }

  private finish(out: UpstreamEvent[], outputIndex: number, item: JsonObject): void {
    this.done[outputIndex] = item;
    this.emit(out, "response.output_item.done", { output_index: outputIndex, item });
  }

  private closeMessage(out: UpstreamEvent[], status: string): void {
    const message = this.message;
    if (!message) return;
    this.message = null;
    const item = {
      id: message.id,
      type: "message",
      role: "assistant",
      status,
      content: message.texts.map(outputTextPart),
    };
    this.finish(out, message.outputIndex, item);
  }
}
