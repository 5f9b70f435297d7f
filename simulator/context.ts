/**
 * The neutral conversation context the policy works on: a list of Responses-style input items
 * (`message`, `function_call`, `function_call_output`, …) plus per-request settings. Both the
 * Responses endpoints and Chat Completions (after conversion) produce this form. Also owns the
 * small helpers that read text out of items.
 */
import { invalidRequest } from "./errors.ts";
import { isJsonObject, type JsonObject } from "./json.ts";

/** A function tool in Responses form (`{type:"function", name, parameters}`). */
export interface FunctionTool {
  name: string;
  /** JSON schema of the arguments; may be absent. */
  parameters: unknown;
}

/** Effective context of one turn (after resolving `previous_response_id`). */
export interface SimContext {
  /** All items in order: history of the chain, then this request's input. */
  items: JsonObject[];
  /** Function tools offered in this request (other tool types are ignored). */
  tools: FunctionTool[];
  /** `tool_choice` as sent (Responses form), or undefined. */
  toolChoice: unknown;
  /** `parallel_tool_calls` (default true). */
  parallelToolCalls: boolean;
  /** Output cap in tokens (`max_output_tokens` / `max_tokens`), or null. */
  maxOutputTokens: number | null;
}

/**
 * Normalizes a Responses `input` (string or item array) into items: a string becomes one user
 * message; items without `type` but with `role` get `type:"message"`. Throws a 400 SimError
 * for anything else.
 */
export function normalizeInput(input: unknown): JsonObject[] {
  if (input === undefined || input === null) return [];
  if (typeof input === "string") return [{ type: "message", role: "user", content: input }];
  if (!Array.isArray(input))
    throw invalidRequest("Invalid type for 'input': expected a string or an array.", "input");
  return input.map((item, i) => {
    if (!isJsonObject(item))
      throw invalidRequest(`Invalid type for 'input[${i}]': expected an object.`, `input[${i}]`);
    if (item.type === undefined && typeof item.role === "string") return { ...item, type: "message" };
    return item;
  });
}

/** Picks the function tools out of a Responses `tools` array (`{type:"function", name, parameters}`). */
export function functionTools(tools: unknown): FunctionTool[] {
  if (!Array.isArray(tools)) return [];
  const out: FunctionTool[] = [];
  for (const t of tools) {
    if (isJsonObject(t) && t.type === "function" && typeof t.name === "string") {
      out.push({ name: t.name, parameters: t.parameters });
    }
  }
  return out;
}

/** Text of a message `content` (string, or parts with `text`/`refusal`); non-text parts ignored. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const texts: string[] = [];
  for (const part of content) {
    if (typeof part === "string") texts.push(part);
    else if (isJsonObject(part) && typeof part.text === "string") texts.push(part.text);
    else if (isJsonObject(part) && typeof part.refusal === "string") texts.push(part.refusal);
  }
  return texts.join("\n");
}

/** True when `item` is a user message. */
export function isUserMessage(item: JsonObject): boolean {
  return (item.type === "message" || item.type === undefined) && item.role === "user";
}

/** Index of the last user message in `items`, or -1. */
export function lastUserIndex(items: JsonObject[]): number {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item && isUserMessage(item)) return i;
  }
  return -1;
}

/** Text of the last user message, or "" when there is none. */
export function lastUserText(items: JsonObject[]): string {
  const item = items[lastUserIndex(items)];
  return item ? contentText(item.content) : "";
}

/** Text of a `function_call_output.output` (string or content parts). */
export function toolOutputText(output: unknown): string {
  return typeof output === "string" ? output : contentText(output);
}
