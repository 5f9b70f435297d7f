/**
 * Chat Completions wire shapes: the request message types Deltagate sends and the zod schema of
 * the streamed `chat.completion.chunk` it receives (the trust boundary of the adapter). Owns no
 * behaviour. Schemas are loose and every field optional where servers differ (vLLM, llama.cpp,
 * Ollama, Groq omit or null fields OpenAI always sends), so only a wrong *type* is rejected.
 * Source: https://platform.openai.com/docs/api-reference/chat/create and
 * https://platform.openai.com/docs/api-reference/chat/streaming.
 */
import { z } from "zod";

/** A user/system/developer content part. */
export type ChatContentPart =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string; detail?: string } }
  | { type: "file"; file: { file_data?: string; file_id?: string; filename?: string } };

/** One function call of an assistant message. */
export interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** A message of role user, system or developer. */
export interface ChatInputMessage {
  role: "user" | "system" | "developer";
  content: string | ChatContentPart[];
}

/** An assistant message: text (or null when it only calls tools), refusal, tool calls. */
export interface ChatAssistantMessage {
  role: "assistant";
  content: string | null;
  refusal?: string;
  tool_calls?: ChatToolCall[];
}

/** A tool result, answering the assistant tool call with id `tool_call_id`. */
export interface ChatToolMessage {
  role: "tool";
  tool_call_id: string;
  content: string;
}

/** Any request message. */
export type ChatMessage = ChatInputMessage | ChatAssistantMessage | ChatToolMessage;

const toolCallDelta = z.looseObject({
  /** Position of the call in the assistant message; some servers omit it (then: by `id`). */
  index: z.number().int().nonnegative().nullish(),
  id: z.string().nullish(),
  type: z.string().nullish(),
  function: z.looseObject({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
});

const choice = z.looseObject({
  index: z.number().int().nullish(),
  delta: z
    .looseObject({
      role: z.string().nullish(),
      content: z.string().nullish(),
      refusal: z.string().nullish(),
      tool_calls: z.array(toolCallDelta).nullish(),
    })
    .nullish(),
  finish_reason: z.string().nullish(),
});

const usage = z.looseObject({
  prompt_tokens: z.number().nullish(),
  completion_tokens: z.number().nullish(),
  total_tokens: z.number().nullish(),
  prompt_tokens_details: z
    .looseObject({ cached_tokens: z.number().nullish(), cache_write_tokens: z.number().nullish() })
    .nullish(),
  completion_tokens_details: z.looseObject({ reasoning_tokens: z.number().nullish() }).nullish(),
});

/** A streamed `chat.completion.chunk` (also matches an in-stream `{error:{…}}` object). */
export const chatChunk = z.looseObject({
  id: z.string().nullish(),
  model: z.string().nullish(),
  choices: z.array(choice).nullish(),
  usage: usage.nullish(),
  error: z
    .looseObject({ message: z.string().nullish(), code: z.union([z.string(), z.number()]).nullish() })
    .nullish(),
});

/** A parsed chunk. */
export type ChatChunk = z.infer<typeof chatChunk>;
/** A parsed choice of a chunk. */
export type ChatChoice = z.infer<typeof choice>;
/** A parsed tool-call fragment. */
export type ChatToolCallDelta = z.infer<typeof toolCallDelta>;
/** A parsed `usage` object. */
export type ChatUsage = z.infer<typeof usage>;
