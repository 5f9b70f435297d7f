/**
 * Upstream request → Gemini `GenerateContentRequest` body (docs/gemini.md), rebuilt every turn
 * from the full context. Owns the settings mapping:
 * - `instructions` → `systemInstruction` (contents.ts); function `tools` →
 *   `tools[{functionDeclarations}]` (`parameters` as `parametersJsonSchema`, JSON Schema as
 *   written), a `namespace` tool's functions flattened to `ns__name`
 *   (src/upstream/tool-namespaces.ts); `tool_choice` `auto` / `none` / `required` / a function → `toolConfig.
 *   functionCallingConfig.mode` `AUTO` / `NONE` / `ANY` / `ANY` with `allowedFunctionNames`;
 * - `max_output_tokens` → `maxOutputTokens`; `temperature` (Gemini's range is 0–2), `top_p`,
 *   `presence_penalty`, `frequency_penalty` → `temperature`, `topP`, `presencePenalty`,
 *   `frequencyPenalty`;
 * - `reasoning.effort` → `thinkingConfig`: `thinkingLevel` (`none` / `minimal` → `minimal`, the
 *   lowest Gemini 3 offers; `low`, `medium`; `high` / `xhigh` → `high`), or for a `gemini-2*`
 *   model, which predates levels, `thinkingBudget` (`THINKING_BUDGETS`; `none` → 0);
 *   `reasoning.summary` (any value) → `includeThoughts: true` (thought summaries become the
 *   reasoning item's summary);
 * - `text.format` `json_schema` / `json_object` → `responseMimeType: "application/json"` (with
 *   `responseJsonSchema`).
 * `parallel_tool_calls: false` has no Gemini switch: the synthesizer keeps the first call of a
 * response only (synthesizer.ts). Refused with a 400 naming the setting (before the turn starts:
 * adapter.ts `refusal`): hosted tools (unless the route's operator chose `hosted_tools: "omit"`),
 * a `custom` member of a namespace, `allowed_tools`, `max_tool_calls`, `top_logprobs`,
 * `text.verbosity` other than medium, `include` other than `reasoning.encrypted_content`,
 * `service_tier` other than auto/default, a temperature above 2. `safety_identifier` / `user`
 * and `prompt_cache_key` / `prompt_cache_retention` change nothing Gemini computes (it has no
 * end-user field, and its implicit cache is keyed by the prefix alone) and are not sent.
 * Pure: no I/O.
 * Source: https://ai.google.dev/api/generate-content (GenerationConfig, ThinkingConfig),
 * https://ai.google.dev/gemini-api/docs/function-calling (function calling modes),
 * https://ai.google.dev/gemini-api/docs/thinking (thinkingLevel, thinkingBudget, includeThoughts),
 * https://ai.google.dev/gemini-api/docs/structured-output (responseJsonSchema).
 */
import { isRecord, type Json } from "../../protocol/json.ts";
import { flattenTools, GEMINI_FUNCTION_NAME } from "../tool-namespaces.ts";
import { refuseUntranslatable, settingRefuser } from "../translated-settings.ts";
import type { UpstreamRequest } from "../upstream.ts";
import { toGeminiConversation } from "./contents.ts";
import type { FunctionDeclaration, GeminiContent } from "./wire.ts";

/** Thinking budget per `reasoning.effort` for models that take a budget (`gemini-2*`), tokens. */
export const THINKING_BUDGETS: Readonly<Record<string, number>> = {
  none: 0,
  minimal: 512,
  low: 1024,
  medium: 8192,
  high: 24_576,
  xhigh: 32_768,
};

/** Thinking level per `reasoning.effort` for models that take a level (Gemini 3 on). */
export const THINKING_LEVELS: Readonly<Record<string, string>> = {
  none: "minimal",
  minimal: "minimal",
  low: "low",
  medium: "medium",
  high: "high",
  xhigh: "high",
};

/** `thinkingConfig` of a request. */
export interface ThinkingConfig {
  thinkingLevel?: string;
  thinkingBudget?: number;
  includeThoughts?: boolean;
}

/** The body Deltagate posts to `models/{model}:streamGenerateContent`. */
export interface GeminiRequestBody {
  contents: GeminiContent[];
  systemInstruction?: { parts: Array<{ text: string }> };
  tools?: Array<{ functionDeclarations: FunctionDeclaration[] }>;
  toolConfig?: { functionCallingConfig: { mode: string; allowedFunctionNames?: string[] } };
  generationConfig?: {
    maxOutputTokens?: number;
    temperature?: number;
    topP?: number;
    presencePenalty?: number;
    frequencyPenalty?: number;
    thinkingConfig?: ThinkingConfig;
    responseMimeType?: string;
    responseJsonSchema?: Json;
  };
}

const refuse = settingRefuser("a Gemini upstream");

function toDeclarations(
  tools: readonly unknown[] | null | undefined,
  omitHosted: boolean,
): FunctionDeclaration[] {
  return flattenTools(tools, refuse, { rule: GEMINI_FUNCTION_NAME, omitHosted }).map((fn) => {
    const out: FunctionDeclaration = { name: fn.name };
    if (fn.description !== undefined) out.description = fn.description;
    if (isRecord(fn.parameters)) out.parametersJsonSchema = fn.parameters as Json;
    return out;
  });
}

function toToolConfig(choice: Json | undefined): GeminiRequestBody["toolConfig"] {
  if (choice === undefined || choice === null || choice === "auto") return undefined;
  if (choice === "none") return { functionCallingConfig: { mode: "NONE" } };
  if (choice === "required") return { functionCallingConfig: { mode: "ANY" } };
  if (isRecord(choice) && choice.type === "function" && typeof choice.name === "string") {
    return { functionCallingConfig: { mode: "ANY", allowedFunctionNames: [choice.name] } };
  }
  throw refuse("tool_choice", "This tool_choice");
}

/** Refuses the settings a Gemini upstream cannot honour (see the module header). */
function refuseUnsupported(request: UpstreamRequest): void {
  const s = request.settings;
  refuseUntranslatable(s, refuse, { max: 2, provider: "Gemini" });
}

/** `thinkingConfig` for `reasoning` on `model`, or undefined (the model's default). */
function toThinking(model: string, reasoning: Json | undefined): ThinkingConfig | undefined {
  if (!isRecord(reasoning)) return undefined;
  const out: ThinkingConfig = {};
  const effort = reasoning.effort;
  if (typeof effort === "string") {
    const budgeted = /^(models\/)?gemini-(1|2)[.-]/.test(model);
    const budget = THINKING_BUDGETS[effort];
    const level = THINKING_LEVELS[effort];
    if (budget === undefined || level === undefined) {
      throw refuse("reasoning.effort", `reasoning.effort '${effort}'`);
    }
    if (budgeted) out.thinkingBudget = budget;
    else out.thinkingLevel = level;
  }
  if (typeof reasoning.summary === "string") out.includeThoughts = true;
  return Object.keys(out).length > 0 ? out : undefined;
}

function toResponseFormat(
  text: Json | undefined,
): { responseMimeType: string; responseJsonSchema?: Json } | null {
  const format = isRecord(text) ? text.format : undefined;
  if (!isRecord(format) || format.type === "text") return null;
  if (format.type === "json_object") return { responseMimeType: "application/json" };
  if (format.type === "json_schema" && isRecord(format.schema)) {
    return { responseMimeType: "application/json", responseJsonSchema: format.schema as Json };
  }
  throw refuse("text.format", `text.format '${String(format.type)}'`);
}

/**
 * Builds the request body for a turn.
 * @param origin the route's base URL (reasoning another upstream issued is left out).
 * @param omitHosted leave OpenAI-hosted tools out rather than refusing them (the route's
 *   `hosted_tools: "omit"`).
 * @throws {UpstreamError} 400 naming a setting, item or part the route cannot carry.
 */
export function toGeminiRequest(
  request: UpstreamRequest,
  origin: string,
  omitHosted = false,
): GeminiRequestBody {
  refuseUnsupported(request);
  const s = request.settings;
  const { system, contents } = toGeminiConversation(s.instructions, request.input, origin);
  const body: GeminiRequestBody = { contents };
  if (system.length > 0) body.systemInstruction = { parts: system.map((text) => ({ text })) };
  const declarations = toDeclarations(s.tools, omitHosted);
  if (declarations.length > 0) {
    body.tools = [{ functionDeclarations: declarations }];
    const config = toToolConfig(s.tool_choice);
    if (config) body.toolConfig = config;
  }
  const generation: NonNullable<GeminiRequestBody["generationConfig"]> = {};
  if (typeof s.max_output_tokens === "number") generation.maxOutputTokens = s.max_output_tokens;
  if (typeof s.temperature === "number") generation.temperature = s.temperature;
  if (typeof s.top_p === "number") generation.topP = s.top_p;
  if (typeof s.presence_penalty === "number") generation.presencePenalty = s.presence_penalty;
  if (typeof s.frequency_penalty === "number") generation.frequencyPenalty = s.frequency_penalty;
  const thinking = toThinking(request.model, s.reasoning);
  if (thinking) generation.thinkingConfig = thinking;
  const format = toResponseFormat(s.text);
  if (format) Object.assign(generation, format);
  if (Object.keys(generation).length > 0) body.generationConfig = generation;
  return body;
}
