/**
 * The Response object an adapter synthesizes for an upstream that speaks another protocol (Chat
 * Completions, Anthropic Messages): the same fields and defaults for every such adapter, so a
 * client sees one shape whatever the route. Owns `SynthesisMeta` and `synthesizedResponse`.
 */
import type { TurnSettings } from "../protocol/create-request.ts";
import type { Json, JsonObject } from "../protocol/json.ts";

/** What the synthesized Response object reports besides its output. */
export interface SynthesisMeta {
  /** The adapter's own response id (re-keyed by the engine). */
  id: string;
  model: string;
  /** Unix seconds. */
  createdAt: number;
  settings: Partial<TurnSettings>;
}

/** The Response object of `meta` in `status`, with its output, incomplete details and usage. */
export function synthesizedResponse(
  meta: SynthesisMeta,
  status: string,
  output: JsonObject[],
  incomplete: JsonObject | null,
  usage: Json,
): JsonObject {
  const s = meta.settings;
  return {
    id: meta.id,
    object: "response",
    created_at: meta.createdAt,
    status,
    model: meta.model,
    output,
    error: null,
    incomplete_details: incomplete,
    usage,
    instructions: s.instructions ?? null,
    metadata: {},
    parallel_tool_calls: s.parallel_tool_calls ?? true,
    temperature: s.temperature ?? 1,
    top_p: s.top_p ?? 1,
    tool_choice: s.tool_choice ?? "auto",
    tools: (s.tools ?? []) as Json,
  };
}

/** An `output_text` content part of a synthesized message (no annotations, no logprobs). */
export function outputTextPart(text: string): JsonObject {
  return { type: "output_text", text, annotations: [], logprobs: [] };
}
