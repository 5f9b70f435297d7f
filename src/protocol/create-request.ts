/**
 * `response.create` parameters (https://developers.openai.com/api/docs/guides/websocket-mode) — the same body as `POST /v1/responses` plus the
 * WebSocket-only `generate` and `stream_id`. Owns request validation into a typed `CreateRequest`
 * and the list of parameters Deltagate knows (docs/protocol.md "Create parameters: where each one goes").
 * Invariant: every top-level field is either one of OpenAI's create parameters (openai-node 7.59.0
 * `ResponseCreateParams` and the WebSocket `ResponsesClientEvent.ResponseCreate`; served,
 * forwarded, or refused by name with a clear error), Codex's `client_metadata`, or refused as
 * OpenAI refuses it: 400 `unknown_parameter`, "Unknown parameter: 'x'.", `param: "x"`
 * (`zodToApiError`, client-events.ts). Nothing is silently dropped.
 * Source: https://platform.openai.com/docs/api-reference/responses/create
 */
import { z } from "zod";
import { type Item, inputItem } from "./items.ts";
import type { Json } from "./json.ts";
import { openAIIssue } from "./openai-issue.ts";

/** The JSON value type (owned by json.ts), re-exported for the modules that read requests. */

const json: z.ZodType<Json> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(json), z.record(z.string(), json)]),
);

/** A tool definition (`{type:"function", name, parameters, strict, description}` or a hosted tool). */
const tool = z.looseObject({ type: z.string().min(1) });

/** A JSON object passed on as sent (the upstream validates its fields). */
const jsonObject = z.record(z.string(), json);

/** `prompt`: a reference to a prompt template of the upstream's (OpenAI's `ResponsePrompt`). */
const prompt = z.looseObject({
  id: z.string().min(1),
  version: z.string().nullish(),
  variables: z.record(z.string(), json).nullish(),
});

/** OpenAI's caps on `metadata`: keys per object, and characters per key and per value. */
export const METADATA_LIMITS = { keys: 16, keyChars: 64, valueChars: 512 } as const;

/** Length in characters as OpenAI counts them (code points), computed only past `limit`. */
function charsOver(text: string, limit: number): number | null {
  if (text.length <= limit) return null;
  const chars = [...text].length;
  return chars > limit ? chars : null;
}

/**
 * `metadata`: "Set of 16 key-value pairs … Keys are strings with a maximum length of 64
 * characters. Values are strings with a maximum length of 512 characters." Errors use OpenAI's
 * codes and wording (`object_above_max_properties`, `string_above_max_length`); the key-length
 * wording follows the same pattern.
 * Source: https://platform.openai.com/docs/api-reference/responses/create#responses_create-metadata
 */
export const metadata = z.record(z.string(), z.string()).superRefine((value, ctx) => {
  const keys = Object.keys(value);
  const { keys: maxKeys, keyChars, valueChars } = METADATA_LIMITS;
  if (keys.length > maxKeys) {
    ctx.addIssue(
      openAIIssue(
        `Invalid 'metadata': too many properties. Expected an object with at most ${maxKeys} properties, but got an object with ${keys.length} properties instead.`,
        "object_above_max_properties",
      ),
    );
    return;
  }
  for (const key of keys) {
    const over = charsOver(key, keyChars);
    if (over !== null) {
      ctx.addIssue(
        openAIIssue(
          `Invalid 'metadata': property name too long. Expected property names with maximum length ${keyChars}, but got a property name with length ${over} instead.`,
          "string_above_max_length",
        ),
      );
      return;
    }
  }
  for (const [key, text] of Object.entries(value)) {
    const over = charsOver(text, valueChars);
    if (over !== null) {
      ctx.addIssue(
        openAIIssue(
          `Invalid 'metadata.${key}': string too long. Expected a string with maximum length ${valueChars}, but got a string with length ${over} instead.`,
          "string_above_max_length",
          [key],
        ),
      );
      return;
    }
  }
});

/** `stream_id` lane label syntax (docs/protocol.md, lanes). */
export const STREAM_ID_PATTERN = /^[A-Za-z0-9_.-]{1,256}$/;

/**
 * Settings that belong to one response: forwarded upstream (those of `FORWARDED_SETTINGS`), most
 * echoed on the Response object.
 */
const turnSettingsShape = {
  model: z.string().min(1, "Missing required parameter: 'model'."),
  instructions: z.string().nullish(),
  tools: z.array(tool).nullish(),
  tool_choice: json.optional(),
  parallel_tool_calls: z.boolean().nullish(),
  max_tool_calls: z.number().int().positive().nullish(),
  reasoning: z.record(z.string(), json).nullish(),
  include: z.array(z.string()).nullish(),
  text: z.record(z.string(), json).nullish(),
  max_output_tokens: z.number().int().positive().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  top_logprobs: z.number().int().min(0).max(20).nullish(),
  /**
   * Sampling penalties: part of the Open Responses `CreateResponseBody` and of Chat Completions
   * (-2.0 to 2.0, https://platform.openai.com/docs/api-reference/chat/create), not of OpenAI's
   * documented Responses parameters (openai/openai-python#3040): forwarded when set, echoed always.
   */
  presence_penalty: z.number().min(-2).max(2).nullish(),
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  truncation: z.enum(["auto", "disabled"]).nullish(),
  metadata: metadata.nullish(),
  user: z.string().nullish(),
  safety_identifier: z.string().nullish(),
  service_tier: z.string().nullish(),
  prompt_cache_key: z.string().nullish(),
  prompt_cache_retention: z.string().nullish(),
  /**
   * Forwarded to Responses routes as sent; Chat Completions and Anthropic Messages routes have no
   * prompt templates and refuse it (src/upstream/route-capabilities.ts). Echoed on the Response object.
   */
  prompt: prompt.nullish(),
  /**
   * Forwarded as sent: to Responses routes, and to Chat Completions (same parameter there);
   * refused by Anthropic Messages routes (route-capabilities.ts).
   */
  prompt_cache_options: jsonObject.nullish(),
  /**
   * `include_obfuscation`: forwarded to Responses routes; the events Deltagate synthesizes for
   * Chat Completions and Anthropic Messages routes carry no obfuscation.
   */
  stream_options: jsonObject.nullish(),
  /** Request-level image options (`context_compression`): Responses routes only (route-capabilities.ts). */
  image: jsonObject.nullish(),
};

/** The per-response settings (`turnSettingsShape`) alone. */
export const turnSettings = z.strictObject(turnSettingsShape);

/**
 * The create body shared by HTTP and WebSocket: unknown fields are refused (`unknown_parameter`).
 * `stream_id` and `generate` are refused over HTTP by the Worker (src/worker/responses-routes.ts).
 */
export const createRequest = z.strictObject({
  ...turnSettingsShape,
  input: z.union([z.string(), z.array(inputItem)]).default([]),
  previous_response_id: z.string().min(1).nullish(),
  store: z.boolean().nullish(),
  stream: z.boolean().nullish(),
  background: z.boolean().nullish(),
  conversation: json.optional(),
  /** WebSocket only: `false` = warm-up, no model output (WebSocket mode guide). */
  generate: z.boolean().nullish(),
  /** WebSocket only: lane label. Syntax is checked by the lane scheduler. */
  stream_id: z.string().nullish(),
  /**
   * Server-side compaction (`[{type:"compaction", compact_threshold}]`): passed to an upstream
   * that compacts, else run by Deltagate (src/compaction/); never echoed on the Response object
   * (OpenAI's has no such field).
   */
  context_management: z
    .array(
      z.looseObject({ type: z.string().min(1), compact_threshold: z.number().int().positive().nullish() }),
    )
    .nullish(),
  /**
   * Moderation of this response's input and output (OpenAI's `moderation` parameter): Deltagate
   * runs it itself (src/safety/) and reports `response.moderation`; it is never forwarded upstream.
   */
  moderation: z
    .strictObject({
      model: z.string().min(1),
      policy: z
        .strictObject({
          input: z.strictObject({ mode: z.enum(["score", "block"]) }).nullish(),
          output: z.strictObject({ mode: z.enum(["score", "block"]) }).nullish(),
        })
        .nullish(),
    })
    .nullish(),
  /**
   * Codex CLI's per-turn telemetry (`session_id`, `turn_id`, `x-codex-*`; test/support/codex-notes.md),
   * sent on every `response.create` and accepted by OpenAI: accepted, never forwarded upstream
   * nor stored.
   */
  client_metadata: jsonObject.nullish(),
  /** OpenAI's Cyber access programs: refused (`unsupported_parameter`) by `rejectUnsupported`. */
  access_programs: jsonObject.nullish(),
  /**
   * Options of background mode (OpenAI's discounted completion windows, a continuation id), which
   * Deltagate does not serve: refused (`unsupported_parameter`) by `rejectUnsupported`, with or
   * without `background`.
   */
  background_options: jsonObject.nullish(),
});

/** A WebSocket `response.create` frame: the create body plus its `type`. */
export const createFrame = createRequest.extend({ type: z.literal("response.create") });

/** A validated create request (settings keep their wire names). */
export type CreateRequest = z.infer<typeof createRequest>;
/** The per-response settings subset. */
export type TurnSettings = z.infer<typeof turnSettings>;

/** The settings that are sent upstream and echoed on the Response object, by wire name. */
export const FORWARDED_SETTINGS = [
  "instructions",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "max_tool_calls",
  "reasoning",
  "include",
  "text",
  "max_output_tokens",
  "temperature",
  "top_p",
  "top_logprobs",
  "presence_penalty",
  "frequency_penalty",
  "truncation",
  "user",
  "safety_identifier",
  "service_tier",
  "prompt_cache_key",
  "prompt_cache_retention",
  "prompt",
  "prompt_cache_options",
  "stream_options",
  "image",
] as const satisfies readonly (keyof TurnSettings)[];

/** The normalized input of a create: always an item array (a string becomes one user message). */
export function normalizeInput(input: CreateRequest["input"]): Item[] {
  if (typeof input === "string") {
    return [{ type: "message", role: "user", content: [{ type: "input_text", text: input }] }];
  }
  return input;
}
