/**
 * Upstream request → Chat Completions request body (docs/upstreams.md), rebuilt every turn
 * from the full context. Owns the settings mapping: function tools (any other tool type was
 * refused before the turn: src/upstream/route-capabilities.ts; one reaching here is an error,
 * never skipped), `tool_choice`, `parallel_tool_calls`, `text.format` → `response_format`,
 * `max_output_tokens` → `max_completion_tokens`, `reasoning.effort` → `reasoning_effort`,
 * sampling (`temperature`, `top_p`, `presence_penalty`, `frequency_penalty`), `user` /
 * `safety_identifier`, `prompt_cache_key` (default: the session key, for prefix-cache affinity),
 * `prompt_cache_options` and `prompt_cache_retention` (the same parameters there), and always
 * `stream: true` with `stream_options.include_usage`.
 * Invariant: settings without a Chat Completions equivalent that Deltagate serves itself or that
 * only shape the Response object (`include`, `max_tool_calls`, `truncation`, `top_logprobs`,
 * `metadata`, `service_tier`…) are never sent; docs/protocol.md "Create parameters: where each
 * one goes" lists them. Pure: no I/O.
 */
import { isRecord, type Json, type JsonObject } from "../../protocol/json.ts";
import { UpstreamError, type UpstreamRequest } from "../upstream.ts";
import { toChatMessages } from "./messages.ts";
import type { ChatMessage } from "./wire.ts";

/** A Chat Completions function tool. */
export interface ChatTool {
  type: "function";
  function: { name: string; description?: string; parameters?: Json; strict?: boolean };
}

/** The request body Deltagate posts to `/chat/completions`. */
export interface ChatRequestBody {
  model: string;
  messages: ChatMessage[];
  stream: true;
  stream_options: { include_usage: true };
  tools?: ChatTool[];
  tool_choice?: Json;
  parallel_tool_calls?: boolean;
  response_format?: Json;
  max_completion_tokens?: number;
  temperature?: number;
  top_p?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  reasoning_effort?: string;
  user?: string;
  safety_identifier?: string;
  prompt_cache_key?: string;
  prompt_cache_options?: Json;
  prompt_cache_retention?: string;
}

/**
 * Responses function tools `{type:"function", name, …}` → Chat tools.
 * @throws {UpstreamError} 400 for any other tool (refused earlier by route-capabilities.ts).
 */
export function toChatTools(tools: readonly unknown[] | null | undefined): ChatTool[] {
  const out: ChatTool[] = [];
  for (const [index, tool] of (tools ?? []).entries()) {
    if (!isRecord(tool) || tool.type !== "function" || typeof tool.name !== "string") {
      throw new UpstreamError(
        400,
        "unsupported_value",
        "Chat Completions routes serve only function tools with a name.",
        "invalid_request_error",
        null,
        `tools[${index}]`,
      );
    }
    const fn: ChatTool["function"] = { name: tool.name };
    if (typeof tool.description === "string") fn.description = tool.description;
    // The tools were parsed from the request's JSON body (src/protocol/create-request.ts).
    if (tool.parameters !== undefined && tool.parameters !== null) fn.parameters = tool.parameters as Json;
    if (typeof tool.strict === "boolean") fn.strict = tool.strict;
    out.push({ type: "function", function: fn });
  }
  return out;
}

/**
 * Responses `tool_choice` → Chat form: `"auto"|"none"|"required"` unchanged, `{type:"function",
 * name}` → `{type:"function", function:{name}}`, `allowed_tools` → Chat's `allowed_tools` with
 * its function tools. Hosted-tool choices have no Chat equivalent: undefined (server default).
 */
export function toChatToolChoice(choice: Json | undefined): Json | undefined {
  if (choice === "auto" || choice === "none" || choice === "required") return choice;
  if (!isRecord(choice)) return undefined;
  if (choice.type === "function" && typeof choice.name === "string") {
    return { type: "function", function: { name: choice.name } };
  }
  if (choice.type === "allowed_tools" && Array.isArray(choice.tools)) {
    const tools = choice.tools
      .filter((tool): tool is JsonObject => isRecord(tool) && tool.type === "function")
      .filter((tool) => typeof tool.name === "string")
      .map((tool) => ({ type: "function", function: { name: tool.name as string } }));
    return { type: "allowed_tools", allowed_tools: { mode: choice.mode ?? "auto", tools } };
  }
  return undefined;
}

/**
 * Responses `text.format` → Chat `response_format`: `json_schema {name, schema, strict,
 * description}` → `{type:"json_schema", json_schema:{…}}`, `json_object` unchanged; `text` (the
 * default) → undefined.
 */
export function toResponseFormat(text: JsonObject | null | undefined): Json | undefined {
  const format = text?.format;
  if (!isRecord(format)) return undefined;
  if (format.type === "json_object") return { type: "json_object" };
  if (format.type !== "json_schema") return undefined;
  const schema: JsonObject = {};
  for (const key of ["name", "schema", "strict", "description"]) {
    const value = format[key];
    if (value !== undefined) schema[key] = value;
  }
  return { type: "json_schema", json_schema: schema };
}

/**
 * Builds the Chat Completions body for a turn.
 * @param request the engine's request: full context in `input`, settings by Responses wire name.
 * @throws {UpstreamError} 400 for content parts Chat Completions cannot carry (messages.ts).
 */
export function toChatRequest(request: UpstreamRequest): ChatRequestBody {
  const s = request.settings;
  const body: ChatRequestBody = {
    model: request.model,
    messages: toChatMessages(s.instructions, request.input),
    stream: true,
    stream_options: { include_usage: true },
  };
  const tools = toChatTools(s.tools);
  if (tools.length > 0) {
    // tool_choice / parallel_tool_calls are rejected by OpenAI without tools, so they ride along.
    body.tools = tools;
    const choice = toChatToolChoice(s.tool_choice);
    if (choice !== undefined) body.tool_choice = choice;
    if (typeof s.parallel_tool_calls === "boolean") body.parallel_tool_calls = s.parallel_tool_calls;
  }
  const format = toResponseFormat(s.text);
  if (format !== undefined) body.response_format = format;
  if (typeof s.max_output_tokens === "number") body.max_completion_tokens = s.max_output_tokens;
  if (typeof s.temperature === "number") body.temperature = s.temperature;
  if (typeof s.top_p === "number") body.top_p = s.top_p;
  if (typeof s.presence_penalty === "number") body.presence_penalty = s.presence_penalty;
  if (typeof s.frequency_penalty === "number") body.frequency_penalty = s.frequency_penalty;
  const effort = s.reasoning?.effort;
  if (typeof effort === "string") body.reasoning_effort = effort;
  if (typeof s.user === "string") body.user = s.user;
  if (typeof s.safety_identifier === "string") body.safety_identifier = s.safety_identifier;
  body.prompt_cache_key = s.prompt_cache_key ?? request.sessionKey;
  if (isRecord(s.prompt_cache_options)) body.prompt_cache_options = s.prompt_cache_options;
  if (typeof s.prompt_cache_retention === "string") body.prompt_cache_retention = s.prompt_cache_retention;
  return body;
}
