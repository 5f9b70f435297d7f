/**
 * Reading a Responses message's content for an upstream that speaks another protocol (Anthropic
 * Messages, Gemini): which part types are text, a `data:` URL's media type and payload, and the
 * 400 for content a route cannot carry, a call's arguments as an object, each call's output.
 * Owns `TEXT_PART_TYPES`, `stringField`, `dataUrl`, `unsupportedContent`, `callArgumentsObject` and
 * `outputsByCallId`.
 * Invariant: what a route cannot carry is refused with a 400 naming it, never dropped
 * (docs/protocol.md "Create parameters: where each one goes").
 */
import type { Item } from "../protocol/items.ts";
import { isRecord, type Json } from "../protocol/json.ts";
import { UpstreamError } from "./upstream.ts";

/** Content part types whose `text` is plain text, whoever wrote it. */
export const TEXT_PART_TYPES: ReadonlySet<string> = new Set(["input_text", "output_text", "text"]);

/** `value` when it is a string, else undefined. */
export function stringField(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** A `data:` URL split into its media type and base64 payload, or null. */
export function dataUrl(url: string): { mediaType: string; data: string } | null {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return match?.[1] && match[2] !== undefined ? { mediaType: match[1], data: match[2] } : null;
}

/** 400 `unsupported_content` for content a route cannot carry; `param` names it when known. */
export function unsupportedContent(message: string, param: string | null = null): UpstreamError {
  return new UpstreamError(400, "unsupported_content", message, "invalid_request_error", null, param);
}

/**
 * A `function_call`'s `arguments` as the JSON object a provider's tool call carries ("" is `{}`).
 * @param upstream the route's provider as a client reads it ("an Anthropic upstream").
 * @throws {UpstreamError} 400 when they are not a JSON object (the provider needs one).
 */
export function callArgumentsObject(
  item: { arguments?: unknown; call_id?: unknown },
  upstream: string,
): Json {
  const raw = stringField(item.arguments) ?? "";
  if (raw.trim() === "") return {};
  try {
    const value: unknown = JSON.parse(raw);
    if (isRecord(value)) return value as Json;
  } catch {
    // refused below
  }
  throw unsupportedContent(
    `The arguments of function_call '${stringField(item.call_id) ?? ""}' are not a JSON object; ${upstream} needs one.`,
    "input",
  );
}

/**
 * The first `function_call_output` of each `call_id` in `items`, so a translation can place it
 * right after its call (providers pair a call with its result by position or id).
 */
export function outputsByCallId(items: readonly Item[]): Map<string, unknown> {
  const outputs = new Map<string, unknown>();
  for (const item of items) {
    if (item.type !== "function_call_output") continue;
    const callId = stringField((item as { call_id?: unknown }).call_id);
    if (callId && !outputs.has(callId)) outputs.set(callId, (item as { output?: unknown }).output);
  }
  return outputs;
}
