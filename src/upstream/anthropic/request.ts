/**
 * Upstream request → Anthropic Messages request body (docs/anthropic.md), rebuilt every turn from
 * the full context. Owns the settings mapping:
 * - `instructions` → `system` (messages.ts); function `tools` → `tools` (`parameters` →
 *   `input_schema`, `strict: true` kept), a `namespace` tool's functions flattened to `ns__name`
 *   (src/upstream/tool-namespaces.ts); `tool_choice` `auto` / `none` / `required` / a function →
 *   `auto` / `none` / `any` / `tool`; `parallel_tool_calls: false` → `disable_parallel_tool_use`;
 * - `max_output_tokens` → `max_tokens` (required by Anthropic; default `DEFAULT_MAX_TOKENS`, plus
 *   the thinking budget when thinking is on);
 * - `reasoning.effort` → `thinking: {type: "enabled", budget_tokens}` (`THINKING_BUDGETS`;
 *   `none` or no effort: no thinking);
 * - `temperature` (Anthropic's range is 0–1) and `top_p`; `safety_identifier` (else `user`) →
 *   `metadata.user_id`; `prompt_cache_retention: "24h"` → the 1-hour cache TTL;
 * - cache breakpoints (cache-breakpoints.ts) unless the route turned them off.
 * Everything else a client may set has no Anthropic equivalent and is refused with a 400 naming
 * it (before the turn starts: adapter.ts `refusal`): tool types other than `function` and
 * `namespace` (a `custom` member of a namespace too), `prompt`, `image` and
 * `prompt_cache_options` by src/upstream/route-capabilities.ts (a hosted tool reaching `toTools`
 * is still refused, unless the route's operator chose `hosted_tools: "omit"`); here `allowed_tools`, `max_tool_calls`, `top_logprobs`, penalties, `text.format`
 * other than text, `text.verbosity` other than medium, `include` other than
 * `reasoning.encrypted_content`, `service_tier` other than auto/default, temperature above 1);
 * `prompt_cache_key` is a routing hint and needs none (Claude's cache is keyed by the prefix).
 * Pure: no I/O.
 * Source: https://docs.anthropic.com/en/api/messages,
 * https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking,
 * https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching.
 */
import { isRecord, type Json } from "../../protocol/json.ts";
import { unsupportedContent } from "../content-parts.ts";
import { ANTHROPIC_TOOL_NAME, flattenTools } from "../tool-namespaces.ts";
import { refuseUntranslatable, settingRefuser } from "../translated-settings.ts";
import type { UpstreamRequest } from "../upstream.ts";
import { placeBreakpoints } from "./cache-breakpoints.ts";
import { toAnthropicConversation } from "./messages.ts";
import type { AnthropicMessage, AnthropicTool, CacheControl } from "./wire.ts";

/** `max_tokens` when the client sets no `max_output_tokens` (and thinking is off). */
export const DEFAULT_MAX_TOKENS = 8192;
/** Claude's smallest thinking budget, tokens. */
export const MIN_THINKING_BUDGET = 1024;
/** Thinking budget per `reasoning.effort`, tokens. */
export const THINKING_BUDGETS: Readonly<Record<string, number>> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 24_576,
  xhigh: 32_000,
};

/** The request body Deltagate posts to `/messages`. */
export interface AnthropicRequestBody {
  model: string;
  max_tokens: number;
  messages: AnthropicMessage[];
  system?: Array<{ type: "text"; text: string; cache_control?: CacheControl }>;
  tools?: AnthropicTool[];
  tool_choice?: Json;
  thinking?: { type: "enabled"; budget_tokens: number };
  temperature?: number;
  top_p?: number;
  metadata?: { user_id: string };
  stream: true;
}

/** The route's prompt-cache settings. */
export interface CacheSettings {
  /** Place breakpoints (cache-breakpoints.ts). */
  breakpoints: boolean;
  /** Minimum cacheable prompt, tokens. */
  minTokens: number;
}

const refuse = settingRefuser("an Anthropic upstream");

function toTools(tools: readonly unknown[] | null | undefined, omitHosted: boolean): AnthropicTool[] {
  return flattenTools(tools, refuse, { rule: ANTHROPIC_TOOL_NAME, omitHosted }).map((fn) => {
    const out: AnthropicTool = {
      name: fn.name,
      input_schema: isRecord(fn.parameters) ? (fn.parameters as Json) : { type: "object", properties: {} },
    };
    if (fn.description !== undefined) out.description = fn.description;
    if (fn.strict) out.strict = true;
    return out;
  });
}

function toToolChoice(choice: Json | undefined, parallel: boolean | null | undefined): Json | undefined {
  let out: Record<string, Json> | undefined;
  if (choice === undefined || choice === null || choice === "auto") out = undefined;
  else if (choice === "none") out = { type: "none" };
  else if (choice === "required") out = { type: "any" };
  else if (isRecord(choice) && choice.type === "function" && typeof choice.name === "string") {
    out = { type: "tool", name: choice.name };
  } else throw refuse("tool_choice", "This tool_choice");
  if (parallel === false && out?.type !== "none")
    return { ...(out ?? { type: "auto" }), disable_parallel_tool_use: true };
  return out;
}

/** Refuses the settings an Anthropic upstream cannot honour (see the module header). */
function refuseUnsupported(request: UpstreamRequest): void {
  const s = request.settings;
  refuseUntranslatable(s, refuse, { max: 1, provider: "Anthropic" });
  if (typeof s.presence_penalty === "number" && s.presence_penalty !== 0) {
    throw refuse("presence_penalty", "presence_penalty");
  }
  if (typeof s.frequency_penalty === "number" && s.frequency_penalty !== 0) {
    throw refuse("frequency_penalty", "frequency_penalty");
  }
  const format = isRecord(s.text) ? s.text.format : undefined;
  if (isRecord(format) && format.type !== "text")
    throw refuse("text.format", `text.format '${String(format.type)}'`);
}

/**
 * Builds the Messages body for a turn.
 * @param origin the route's base URL (reasoning another upstream issued is left out).
 * @param omitHosted leave OpenAI-hosted tools out rather than refusing them (the route's
 *   `hosted_tools: "omit"`).
 * @throws {UpstreamError} 400 naming a setting, item or part the route cannot carry.
 */
export function toAnthropicRequest(
  request: UpstreamRequest,
  origin: string,
  cache: CacheSettings,
  omitHosted = false,
): AnthropicRequestBody {
  refuseUnsupported(request);
  const s = request.settings;
  const { system, messages } = toAnthropicConversation(s.instructions, request.input, origin);
  const effort = isRecord(s.reasoning) ? s.reasoning.effort : undefined;
  let budget = typeof effort === "string" ? (THINKING_BUDGETS[effort] ?? null) : null;
  if (typeof effort === "string" && effort !== "none" && budget === null) {
    throw refuse("reasoning.effort", `reasoning.effort '${effort}'`);
  }
  let maxTokens = DEFAULT_MAX_TOKENS + (budget ?? 0);
  if (typeof s.max_output_tokens === "number") {
    maxTokens = s.max_output_tokens;
    if (budget !== null && budget >= maxTokens) {
      if (maxTokens - 1 < MIN_THINKING_BUDGET) {
        throw unsupportedContent(
          `max_output_tokens must exceed ${MIN_THINKING_BUDGET} when reasoning is on (Claude's smallest thinking budget).`,
          "max_output_tokens",
        );
      }
      budget = maxTokens - 1;
    }
  }
  const body: AnthropicRequestBody = { model: request.model, max_tokens: maxTokens, messages, stream: true };
  if (system.length > 0) body.system = system.map((text) => ({ type: "text", text }));
  const tools = toTools(s.tools, omitHosted);
  if (tools.length > 0) {
    body.tools = tools;
    const choice = toToolChoice(s.tool_choice, s.parallel_tool_calls);
    if (choice !== undefined) body.tool_choice = choice;
  }
  if (budget !== null) body.thinking = { type: "enabled", budget_tokens: budget };
  if (typeof s.temperature === "number") body.temperature = s.temperature;
  if (typeof s.top_p === "number") body.top_p = s.top_p;
  const user = s.safety_identifier ?? s.user;
  if (typeof user === "string" && user !== "") body.metadata = { user_id: user };
  if (cache.breakpoints) {
    const prompt = {
      messages: body.messages,
      ...(body.tools ? { tools: body.tools } : {}),
      ...(body.system ? { system: body.system } : {}),
    };
    placeBreakpoints(prompt, cache.minTokens, s.prompt_cache_retention === "24h" ? "1h" : "5m");
  }
  return body;
}
