/**
 * Anthropic Messages wire shapes: the request blocks and messages Deltagate sends, and the zod
 * schemas of the streamed events it receives (the trust boundary of the adapter). Loose: unknown
 * fields pass, only a wrong type of a field Deltagate reads is rejected.
 * Source: https://docs.anthropic.com/en/api/messages,
 * https://docs.anthropic.com/en/docs/build-with-claude/streaming.
 */
import { z } from "zod";
import type { Json } from "../../protocol/json.ts";

/** `cache_control` of a block (prompt caching). */
export interface CacheControl {
  type: "ephemeral";
  ttl?: "5m" | "1h";
}

/** A request content block. */
export type ContentBlock = (
  | { type: "text"; text: string }
  | {
      type: "image";
      source: { type: "base64"; media_type: string; data: string } | { type: "url"; url: string };
    }
  | {
      type: "document";
      source: { type: "base64"; media_type: string; data: string } | { type: "url"; url: string };
    }
  | { type: "tool_use"; id: string; name: string; input: Json }
  | { type: "tool_result"; tool_use_id: string; content: string | ContentBlock[]; is_error?: boolean }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string }
) & { cache_control?: CacheControl };

/** A request message. */
export interface AnthropicMessage {
  role: "user" | "assistant";
  content: ContentBlock[];
}

/** A tool definition. */
export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: Json;
  strict?: boolean;
  cache_control?: CacheControl;
}

const usage = z.looseObject({
  input_tokens: z.number().nullish(),
  output_tokens: z.number().nullish(),
  cache_creation_input_tokens: z.number().nullish(),
  cache_read_input_tokens: z.number().nullish(),
});

/** Usage as Anthropic reports it (`message_start.message.usage`, `message_delta.usage`). */
export type AnthropicUsage = z.infer<typeof usage>;

const errorBody = z.looseObject({ type: z.string().nullish(), message: z.string().nullish() });

/** One streamed event (`data:` of an SSE event), by its `type`. */
export const streamEvent = z.discriminatedUnion("type", [
  z.looseObject({
    type: z.literal("message_start"),
    message: z.looseObject({ id: z.string().nullish(), model: z.string().nullish(), usage: usage.nullish() }),
  }),
  z.looseObject({
    type: z.literal("content_block_start"),
    index: z.number().int().nonnegative(),
    content_block: z.looseObject({
      type: z.string(),
      id: z.string().nullish(),
      name: z.string().nullish(),
      text: z.string().nullish(),
      thinking: z.string().nullish(),
      signature: z.string().nullish(),
      data: z.string().nullish(),
    }),
  }),
  z.looseObject({
    type: z.literal("content_block_delta"),
    index: z.number().int().nonnegative(),
    delta: z.looseObject({
      type: z.string(),
      text: z.string().nullish(),
      partial_json: z.string().nullish(),
      thinking: z.string().nullish(),
      signature: z.string().nullish(),
    }),
  }),
  z.looseObject({ type: z.literal("content_block_stop"), index: z.number().int().nonnegative() }),
  z.looseObject({
    type: z.literal("message_delta"),
    delta: z.looseObject({ stop_reason: z.string().nullish() }).nullish(),
    usage: usage.nullish(),
  }),
  z.looseObject({ type: z.literal("message_stop") }),
  z.looseObject({ type: z.literal("ping") }),
  z.looseObject({ type: z.literal("error"), error: errorBody.nullish() }),
]);

/** A parsed stream event. */
export type StreamEvent = z.infer<typeof streamEvent>;

/** Anthropic's error envelope `{type:"error", error:{type, message}}`. */
export const errorEnvelope = z.looseObject({ error: errorBody.nullish() });
