/**
 * Gemini stream chunks → Responses stream events (docs/gemini.md). Owns the state of one streamed
 * `GenerateContentResponse`: the open message item, the open reasoning item, the finish reason
 * and the usage. Mapping (first candidate only; Deltagate asks for one):
 * - the first chunk → `response.created`, `response.in_progress`;
 * - text parts → one `message` item (`response.output_text.delta` per part);
 * - thought parts (`thought: true`, asked for with `includeThoughts`) → a `reasoning` item whose
 *   summary is their text (`response.reasoning_summary_text.delta`);
 * - a `functionCall` part → a `function_call` item, arguments in one delta (`call_id` = the
 *   call's `id`, or an `fc_` id Deltagate mints when Gemini sent none: contents.ts never sends a
 *   minted one back; a flattened namespace member's name → `name` and `namespace`:
 *   src/upstream/tool-namespaces.ts); with `parallel_tool_calls: false` only the first call of a response is kept
 *   (Gemini has no such switch);
 * - thought signatures (thought-signatures.ts): the signature of a part that opens an item (a
 *   `functionCall`, the first text part of a message) closes a `reasoning` item placed right
 *   before that item, as its `next`; a signed part without an item of its own (a thought part, an
 *   empty text part) is kept verbatim in the open reasoning item. A signature on a later text
 *   part of a message already streamed (Gemini 3 signs the last part of a text answer) has no
 *   item after which to go back and is not carried: Gemini validates function-call signatures
 *   only (thought-signatures page, "Validation").
 * - the end of the stream → the terminal event by `finishReason`: `STOP` → `completed`;
 *   `MAX_TOKENS` → `incomplete` (`max_output_tokens`); `SAFETY`, `RECITATION`, `LANGUAGE`,
 *   `BLOCKLIST`, `PROHIBITED_CONTENT`, `SPII`, `IMAGE_SAFETY` and a blocked prompt
 *   (`promptFeedback.blockReason`) → `incomplete` (`content_filter`); any other reason
 *   (`MALFORMED_FUNCTION_CALL`, `UNEXPECTED_TOOL_CALL`, `TOO_MANY_TOOL_CALLS`, `OTHER`) fails the
 *   response (502 naming it).
 * Usage (`usageMetadata`, the last chunk's): `input_tokens` = `promptTokenCount` (cached content
 * included) + `toolUsePromptTokenCount`, `input_tokens_details.cached_tokens` =
 * `cachedContentTokenCount` (implicit caching), `input_tokens_details.cache_write_tokens` = 0
 * (Gemini reports none: implicit caching bills no write, explicit caches bill storage by the hour,
 * https://ai.google.dev/gemini-api/docs/caching; the `openai` SDK's `ResponseUsage` requires the
 * field), `output_tokens` = `candidatesTokenCount` +
 * `thoughtsTokenCount`, `output_tokens_details.reasoning_tokens` = `thoughtsTokenCount`.
 * Invariants: as the other synthesizers' (items opened in `output_index` order, each closed with
 * `output_item.done` before the next opens, contiguous `sequence_number`s); ids are the adapter's
 * own (the engine re-keys them; a reasoning item keeps its id). Pure: no I/O.
 * Source: https://ai.google.dev/api/generate-content (GenerateContentResponse, FinishReason,
 * UsageMetadata), https://ai.google.dev/gemini-api/docs/thought-signatures,
 * https://ai.google.dev/gemini-api/docs/thinking (thought summaries),
 * https://platform.openai.com/docs/api-reference/responses-streaming.
 */
import type { JsonObject } from "../../protocol/json.ts";
import { newItemId } from "../../util/ids.ts";
import { outputTextPart, type SynthesisMeta, synthesizedResponse } from "../synthesized-response.ts";
import { callFields, type NamespacedName, namespacedNames } from "../tool-namespaces.ts";
import { brokenStream } from "../translated-stream.ts";
import type { UpstreamEvent } from "../upstream.ts";
import { sealThoughts } from "./thought-signatures.ts";
import type { GeminiPart, GeminiUsage, StreamChunk, StreamPart } from "./wire.ts";

export type { SynthesisMeta } from "../synthesized-response.ts";

/** Finish reasons that end a response as filtered content. */
const FILTERED = new Set([
  "SAFETY",
  "RECITATION",
  "LANGUAGE",
  "BLOCKLIST",
  "PROHIBITED_CONTENT",
  "SPII",
  "IMAGE_SAFETY",
]);

interface MessageState {
  outputIndex: number;
  id: string;
  text: string;
}

interface ReasoningState {
  outputIndex: number;
  id: string;
  /** Summary texts, one per run of thought parts. */
  summaries: string[];
  /** A summary part is open (thought text is streaming into it). */
  summaryOpen: boolean;
  parts: GeminiPart[];
}

/** Gemini usage → Responses usage (see the module header). */
export function toResponsesUsage(usage: GeminiUsage): JsonObject {
  const input = (usage.promptTokenCount ?? 0) + (usage.toolUsePromptTokenCount ?? 0);
  const thoughts = usage.thoughtsTokenCount ?? 0;
  const output = (usage.candidatesTokenCount ?? 0) + thoughts;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage.cachedContentTokenCount ?? 0, cache_write_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: thoughts },
    total_tokens: input + output,
  };
}

/** Synthesizes the Responses events of one Gemini stream. */
export class GeminiEventSynthesizer {
  private readonly meta: SynthesisMeta;
  private readonly singleCall: boolean;
  private seq = 0;
  private readonly done: JsonObject[] = [];
  private nextOutputIndex = 0;
  private message: MessageState | null = null;
  private reasoning: ReasoningState | null = null;
  private calls = 0;
  private usage: GeminiUsage = {};
  private finishReason: string | null = null;
  private blocked = false;
  private started = false;
  private ended = false;

  /** The turn's namespace members by their flattened name. */
  private readonly namespaced: ReadonlyMap<string, NamespacedName>;

  constructor(meta: SynthesisMeta) {
    this.meta = meta;
    this.namespaced = namespacedNames(meta.settings.tools);
    this.singleCall = meta.settings.parallel_tool_calls === false;
  }

  /** True once a chunk carried a finish reason (or the prompt was blocked). */
  get finished(): boolean {
    return this.finishReason !== null || this.blocked;
  }

  /** The events for one chunk. */
  push(chunk: StreamChunk): UpstreamEvent[] {
    const out: UpstreamEvent[] = [];
    if (this.ended) throw brokenStream("The upstream sent a chunk after the end of the response.");
    if (!this.started) {
      this.started = true;
      this.emit(out, "response.created", { response: this.response("in_progress", null) });
      this.emit(out, "response.in_progress", { response: this.response("in_progress", null) });
    }
    if (chunk.usageMetadata) this.usage = chunk.usageMetadata;
    if (chunk.promptFeedback?.blockReason) this.blocked = true;
    const candidate = chunk.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) this.part(out, part);
    if (candidate?.finishReason) this.finishReason = candidate.finishReason;
    return out;
  }

  /**
   * The closing events, once the stream ended.
   * @throws {UpstreamError} 502 when no chunk carried a finish reason (the stream was cut), or
   *   for a finish reason that is a failure (see the module header).
   */
  end(): UpstreamEvent[] {
    const out: UpstreamEvent[] = [];
    if (!this.finished) throw brokenStream("The upstream stream ended before the response finished.");
    this.ended = true;
    const reason = this.blocked ? "content_filter" : this.incompleteReason();
    this.closeMessage(out, reason === null ? "completed" : "incomplete");
    this.closeReasoning(out, null);
    const status = reason === null ? "completed" : "incomplete";
    this.emit(out, `response.${status}`, { response: this.response(status, reason ? { reason } : null) });
    return out;
  }

  private incompleteReason(): string | null {
    const reason = this.finishReason;
    if (reason === "STOP") return null;
    if (reason === "MAX_TOKENS") return "max_output_tokens";
    if (reason !== null && FILTERED.has(reason)) return "content_filter";
    throw brokenStream(`The upstream model stopped with finishReason ${String(reason)}.`);
  }

  private emit(out: UpstreamEvent[], type: string, fields: JsonObject): void {
    out.push({ type, sequence_number: this.seq++, ...fields });
  }

  private response(status: string, incomplete: JsonObject | null): JsonObject {
    const inProgress = status === "in_progress";
    const usage = inProgress ? null : toResponsesUsage(this.usage);
    return synthesizedResponse(this.meta, status, inProgress ? [] : [...this.done], incomplete, usage);
  }

  private part(out: UpstreamEvent[], part: StreamPart): void {
    const signature = part.thoughtSignature || null;
    if (part.functionCall) {
      this.closeMessage(out, "completed");
      if (this.singleCall && this.calls > 0) return;
      if (signature !== null) this.closeReasoning(out, signature, true);
      else this.closeReasoning(out, null);
      this.call(out, part.functionCall);
      return;
    }
    if (typeof part.text !== "string") return; // parts Deltagate never asks for (code execution, media)
    if (part.thought === true) {
      this.closeMessage(out, "completed");
      this.thought(out, part.text, signature);
      return;
    }
    if (this.message) {
      // A signature on a later part of a streamed message: not carried (see the module header).
      if (part.text !== "") this.textDelta(out, this.message, part.text);
      return;
    }
    if (part.text === "") {
      if (signature !== null) this.openReasoning(out).parts.push({ text: "", thoughtSignature: signature });
      return;
    }
    if (signature !== null) this.closeReasoning(out, signature, true);
    else this.closeReasoning(out, null);
    const message: MessageState = { outputIndex: this.nextOutputIndex++, id: newItemId("message"), text: "" };
    this.message = message;
    this.emit(out, "response.output_item.added", {
      output_index: message.outputIndex,
      item: { id: message.id, type: "message", role: "assistant", status: "in_progress", content: [] },
    });
    this.emit(out, "response.content_part.added", {
      item_id: message.id,
      output_index: message.outputIndex,
      content_index: 0,
      part: outputTextPart(""),
    });
    this.textDelta(out, message, part.text);
  }

  private textDelta(out: UpstreamEvent[], message: MessageState, delta: string): void {
    message.text += delta;
    this.emit(out, "response.output_text.delta", {
      item_id: message.id,
      output_index: message.outputIndex,
      content_index: 0,
      delta,
      logprobs: [],
    });
  }

  private call(out: UpstreamEvent[], call: NonNullable<StreamPart["functionCall"]>): void {
    this.calls++;
    const outputIndex = this.nextOutputIndex++;
    const id = newItemId("function_call");
    const callId = call.id || newItemId("function_call");
    const names = callFields(call.name ?? "", this.namespaced);
    const name = names.name;
    const args = JSON.stringify(call.args ?? {});
    this.emit(out, "response.output_item.added", {
      output_index: outputIndex,
      item: { id, type: "function_call", status: "in_progress", call_id: callId, ...names, arguments: "" },
    });
    this.emit(out, "response.function_call_arguments.delta", {
      item_id: id,
      output_index: outputIndex,
      delta: args,
    });
    this.emit(out, "response.function_call_arguments.done", {
      item_id: id,
      output_index: outputIndex,
      name,
      arguments: args,
    });
    this.finish(out, outputIndex, {
      id,
      type: "function_call",
      status: "completed",
      call_id: callId,
      ...names,
      arguments: args,
    });
  }

  private openReasoning(out: UpstreamEvent[]): ReasoningState {
    if (this.reasoning) return this.reasoning;
    const reasoning: ReasoningState = {
      outputIndex: this.nextOutputIndex++,
      id: newItemId("reasoning"),
      summaries: [],
      summaryOpen: false,
      parts: [],
    };
    this.reasoning = reasoning;
    this.emit(out, "response.output_item.added", {
      output_index: reasoning.outputIndex,
      item: { id: reasoning.id, type: "reasoning", summary: [] },
    });
    return reasoning;
  }

  private thought(out: UpstreamEvent[], text: string, signature: string | null): void {
    const reasoning = this.openReasoning(out);
    if (signature !== null) {
      reasoning.parts.push({ text, thought: true, thoughtSignature: signature });
    }
    if (text === "") return;
    const scope = { item_id: reasoning.id, output_index: reasoning.outputIndex };
    if (!reasoning.summaryOpen) {
      reasoning.summaryOpen = true;
      reasoning.summaries.push("");
      this.emit(out, "response.reasoning_summary_part.added", {
        ...scope,
        summary_index: reasoning.summaries.length - 1,
        part: { type: "summary_text", text: "" },
      });
    }
    const index = reasoning.summaries.length - 1;
    reasoning.summaries[index] += text;
    this.emit(out, "response.reasoning_summary_text.delta", { ...scope, summary_index: index, delta: text });
  }

  /**
   * Closes the open reasoning item with `next` as the signature of the item that follows; with
   * `force`, opens one first (a signature with no thought before it).
   */
  private closeReasoning(out: UpstreamEvent[], next: string | null, force = false): void {
    const reasoning = force ? this.openReasoning(out) : this.reasoning;
    if (!reasoning) return;
    this.reasoning = null;
    if (reasoning.summaryOpen) {
      const index = reasoning.summaries.length - 1;
      const text = reasoning.summaries[index] ?? "";
      const scope = { item_id: reasoning.id, output_index: reasoning.outputIndex, summary_index: index };
      this.emit(out, "response.reasoning_summary_text.done", { ...scope, text });
      this.emit(out, "response.reasoning_summary_part.done", {
        ...scope,
        part: { type: "summary_text", text },
      });
    }
    this.finish(out, reasoning.outputIndex, {
      id: reasoning.id,
      type: "reasoning",
      summary: reasoning.summaries.map((text) => ({ type: "summary_text", text })),
      encrypted_content: sealThoughts({ parts: reasoning.parts, next }),
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
    const scope = { item_id: message.id, output_index: message.outputIndex, content_index: 0 };
    this.emit(out, "response.output_text.done", { ...scope, text: message.text, logprobs: [] });
    this.emit(out, "response.content_part.done", { ...scope, part: outputTextPart(message.text) });
    this.finish(out, message.outputIndex, {
      id: message.id,
      type: "message",
      role: "assistant",
      status,
      content: [outputTextPart(message.text)],
    });
  }
}
