/**
 * Deltagate's own compaction: asks the route's model for a summary of a context with a fixed,
 * documented prompt (docs/compaction.md), and reads the summary off the stream. Owns the prompt
 * and the summarization request. Works through any `Upstream` (Responses HTTP or WebSocket mode,
 * Chat Completions), so any upstream can compact.
 * The request: `instructions` = `COMPACTION_PROMPT`; input = the client's instructions (as a
 * developer message, when there are any), the context (Deltagate compaction items already
 * expanded by the caller), then one user message asking for the summary (so the request ends with
 * a user turn, as every chat template expects); no tools; a fresh chain.
 * Invariant: `summarize` resolves only with a non-empty summary of a completed response; anything
 * else rejects with `UpstreamError` (the caller decides how the client sees it).
 */
import type { Item, StoredItem } from "../protocol/items.ts";
import { isRecord, type Json } from "../protocol/json.ts";
import { type Upstream, UpstreamError, type UpstreamEvent } from "../upstream/upstream.ts";
import { newItemId } from "../util/ids.ts";

/**
 * The system prompt of Deltagate's own compaction. Written for any instruction-following model;
 * it asks for what a continuation needs (the task, decisions, state, the user's requests and
 * constraints, open items, identifiers), not a narrative.
 */
export const COMPACTION_PROMPT = [
  "You are compacting a conversation between a user and an AI assistant so that it can continue in a",
  "smaller context window. Write a summary that lets the assistant continue the work as if it still had",
  "the whole conversation. Include: the user's goals and every request and constraint they stated (quote",
  "short ones verbatim); facts, names, numbers, code words, identifiers, file paths and commands that",
  "matter; decisions made and why; what was done and its results (tool calls and their outcomes, in",
  "brief); the current state; and what remains to be done. Be complete but concise. Write only the",
  "summary, in plain text, with no preamble.",
].join("\n");

/** The last message of a summarization request. */
export const SUMMARY_REQUEST = "Write the summary of the conversation above now, as instructed.";

/** What a summarization produced. */
export interface Summary {
  text: string;
  /** The upstream's usage of the summarization request, or null when it reported none. */
  usage: Json | null;
}

/** What to summarize. */
export interface SummaryRequest {
  /** The model id as the route knows it (the route rewrites it when it sets `upstream_model`). */
  model: string;
  /** The summarization input: `summaryInput(context, instructions)`. */
  input: readonly StoredItem[];
  /** A response id for the upstream's bookkeeping (never stored). */
  responseId: string;
  /** The session key (default `prompt_cache_key`). */
  sessionKey: string;
  /** The client's `prompt_cache_key`, if any. */
  promptCacheKey?: string | null | undefined;
}

function message(role: "user" | "developer", text: string): StoredItem {
  return {
    type: "message",
    id: newItemId("message"),
    role,
    content: [{ type: "input_text", text }],
  } as StoredItem;
}

/** The assistant text of a terminal `response.output`, or null when it has none. */
function outputText(output: unknown): string | null {
  if (!Array.isArray(output)) return null;
  let text = "";
  for (const item of output) {
    if (!isRecord(item) || item.type !== "message" || !Array.isArray(item.content)) continue;
    for (const part of item.content) {
      if (isRecord(part) && part.type === "output_text" && typeof part.text === "string") text += part.text;
    }
  }
  return text;
}

/**
 * The input of a summarization: the conversation's instructions (a developer message, when there
 * are any), the context (Deltagate compaction items as they are: the compaction stage expands
 * them), then the request for the summary.
 */
export function summaryInput(context: readonly StoredItem[], instructions: string | null): StoredItem[] {
  const input: Item[] = [
    ...(instructions ? [message("developer", `Instructions of this conversation:\n${instructions}`)] : []),
    ...context,
    message("user", SUMMARY_REQUEST),
  ];
  return input as StoredItem[];
}

/**
 * Runs one summarization on `upstream`.
 * @throws {UpstreamError} when the upstream fails, the response does not complete, or the summary
 *   is empty.
 */
export async function summarize(
  upstream: Upstream,
  request: SummaryRequest,
  signal: AbortSignal,
): Promise<Summary> {
  const stored = request.input;
  const stream = await upstream.open(
    {
      model: request.model,
      input: stored,
      newInput: stored,
      previousResponseId: null,
      responseId: request.responseId,
      settings: {
        instructions: COMPACTION_PROMPT,
        ...(request.promptCacheKey ? { prompt_cache_key: request.promptCacheKey } : {}),
      },
      sessionKey: request.sessionKey,
    },
    signal,
  );
  let deltas = "";
  let terminal: UpstreamEvent | null = null;
  const read = (event: UpstreamEvent): boolean => {
    if (event.type === "response.output_text.delta" && typeof event.delta === "string") deltas += event.delta;
    if (event.type === "error") {
      const text = typeof event.message === "string" ? event.message : "The upstream reported an error.";
      throw new UpstreamError(502, typeof event.code === "string" ? event.code : "upstream_error", text);
    }
    if (
      event.type === "response.completed" ||
      event.type === "response.incomplete" ||
      event.type === "response.failed"
    ) {
      terminal = event;
      return true;
    }
    return false;
  };
  if (!read(stream.first)) {
    for await (const event of stream.rest) if (read(event)) break;
  }
  const end = terminal as UpstreamEvent | null;
  const failedWith = end?.type === "response.failed" && isRecord(end.response) ? end.response.error : null;
  if (isRecord(failedWith) && typeof failedWith.code === "string") {
    // A refusal of the request (a safety check: `moderation_blocked`) stays the client's error.
    const status = failedWith.code === "moderation_blocked" ? 400 : 502;
    const text =
      typeof failedWith.message === "string" ? failedWith.message : "The compaction summary failed.";
    throw new UpstreamError(status, failedWith.code, text);
  }
  if (end?.type !== "response.completed") {
    throw new UpstreamError(
      502,
      "compaction_failed",
      `The model did not complete the compaction summary (${end ? end.type : "the stream ended early"}).`,
    );
  }
  const response = isRecord(end.response) ? end.response : {};
  const text = (outputText(response.output) || deltas).trim();
  if (!text)
    throw new UpstreamError(502, "compaction_failed", "The model returned an empty compaction summary.");
  return { text, usage: (response.usage as Json | undefined) ?? null };
}
