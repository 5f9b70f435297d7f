/**
 * Anthropic Messages turns straight to the provider (`POST /v1/messages`, `stream: true`), the way
 * a user of the Messages API without prompt caching talks to Claude (scenario AN-direct, issue
 * #26): the whole conversation every turn, no `cache_control` anywhere, so every turn pays the
 * prefill of its whole prompt.
 * Owns the loop's conversation in Messages form (the developer message becomes `system`, the user
 * prompt a user message, each turn's `function_call_output`s one user message of `tool_result`
 * blocks after the assistant message whose `tool_use` blocks they answer) and the count of the
 * JSON bytes it sent. Reads the turn's cache from the usage of `message_start` (input, cache-read
 * and cache-write tokens, which `message_delta` repeats cumulatively).
 * Source: https://docs.anthropic.com/en/api/messages,
 * https://docs.anthropic.com/en/docs/build-with-claude/streaming,
 * https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching (usage fields).
 */
import type { ResponseInputItem } from "openai/resources/responses/responses";
import { parseSse } from "../src/upstream/sse.ts";
import type { FunctionCall, TurnInput, TurnResult, TurnTransport } from "./loop.ts";
import type { LoopFetch } from "./loop-fetch.ts";
import type { TurnCache } from "./metrics.ts";
import { BENCH_TOOLS, textOf } from "./workload.ts";

/** The API version header every Messages request carries (https://docs.anthropic.com/en/api/versioning). */
const ANTHROPIC_VERSION = "2023-06-01";
/** `max_tokens` is required by the Messages API; the workload's turns are far below it. */
const MAX_TOKENS = 4_096;

/** Configuration of a Messages transport (one loop). */
export interface MessagesTransportOptions {
  /** Base URL including `/v1`. */
  baseURL: string;
  apiKey: string;
  model: string;
  /** Extra request headers (session id, timing opt-in: the same bytes as the other direct loops). */
  headers: Record<string, string>;
  loopFetch: LoopFetch;
  turnTimeoutMs: number;
}

type Block =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | { type: "tool_result"; tool_use_id: string; content: string };

interface Message {
  role: "user" | "assistant";
  content: string | Block[];
}

interface Usage {
  input_tokens?: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/** The Messages tools of the workload (the Responses function tools' schemas as `input_schema`). */
export const MESSAGES_TOOLS = BENCH_TOOLS.map((tool) => ({
  name: tool.name,
  description: tool.description ?? "",
  input_schema: tool.parameters ?? { type: "object" },
}));

/** The turn's input and cache-read tokens from Anthropic's usage. */
export function messagesCache(usage: Usage): TurnCache {
  const read = usage.cache_read_input_tokens ?? 0;
  return {
    inputTokens: (usage.input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0) + read,
    cachedTokens: read,
  };
}

/** Creates a Messages transport for one loop. */
export function messagesTransport(options: MessagesTransportOptions): TurnTransport {
  let system = "";
  const messages: Message[] = [];

  const append = (items: ResponseInputItem[]): void => {
    const results: Block[] = [];
    for (const item of items) {
      if (item.type === "function_call_output" && item.call_id) {
        results.push({ type: "tool_result", tool_use_id: item.call_id, content: textOf(item.output) });
      } else if (item.type === "message" && (item.role === "developer" || item.role === "system")) {
        system += textOf(item.content);
      } else if (item.type === "message" && item.role === "user") {
        messages.push({ role: "user", content: textOf(item.content) });
      } else {
        throw new Error(`the Messages transport cannot send a ${item.type} item`);
      }
    }
    if (results.length > 0) messages.push({ role: "user", content: results });
  };

  return {
    async turn({ newItems }: TurnInput): Promise<TurnResult> {
      append(newItems);
      const body = JSON.stringify({
        model: options.model,
        max_tokens: MAX_TOKENS,
        system,
        tools: MESSAGES_TOOLS,
        messages,
        stream: true,
      });
      await new Promise((resolve) => setImmediate(resolve)); // as in http-transport.ts
      const started = performance.now();
      const signal = AbortSignal.timeout(options.turnTimeoutMs);
      const response = await options.loopFetch.fetch(`${options.baseURL}/messages`, {
        method: "POST",
        headers: {
          ...options.headers,
          "x-api-key": options.apiKey,
          "anthropic-version": ANTHROPIC_VERSION,
          "content-type": "application/json",
        },
        body,
        signal,
      });
      if (!response.ok || !response.body) {
        throw new Error(
          `POST /v1/messages answered ${response.status}: ${(await response.text()).slice(0, 300)}`,
        );
      }
      let ttftMs: number | null = null;
      let cache: TurnCache | null = null;
      let stopReason: string | null = null;
      const blocks: Array<Block & { json?: string }> = [];
      for await (const event of parseSse(response.body, signal)) {
        const data = JSON.parse(event.data) as Record<string, unknown>;
        if (data.type === "message_start") {
          const message = data.message as { usage?: Usage };
          cache = message.usage ? messagesCache(message.usage) : null;
        } else if (data.type === "content_block_start") {
          ttftMs ??= performance.now() - started;
          const block = data.content_block as Block;
          blocks[data.index as number] = block.type === "tool_use" ? { ...block, json: "" } : { ...block };
        } else if (data.type === "content_block_delta") {
          const block = blocks[data.index as number];
          const delta = data.delta as { type: string; text?: string; partial_json?: string };
          if (block?.type === "text" && delta.type === "text_delta") block.text += delta.text ?? "";
          if (block?.type === "tool_use" && delta.type === "input_json_delta") {
            block.json = (block.json ?? "") + (delta.partial_json ?? "");
          }
        } else if (data.type === "message_delta") {
          stopReason = (data.delta as { stop_reason?: string }).stop_reason ?? null;
          const usage = data.usage as Usage | undefined;
          if (usage?.input_tokens !== undefined) cache = messagesCache(usage);
        } else if (data.type === "error") {
          throw new Error(`Messages stream error: ${event.data.slice(0, 300)}`);
        }
      }
      const latencyMs = performance.now() - started;
      if (stopReason === null) throw new Error("the Messages stream ended without a stop_reason");
      const content: Block[] = blocks.map((block) => {
        if (block.type !== "tool_use") return block;
        const { json, ...rest } = block;
        return { ...rest, input: json ? (JSON.parse(json) as unknown) : {} };
      });
      messages.push({ role: "assistant", content });
      const calls: FunctionCall[] = content.flatMap((block) =>
        block.type === "tool_use"
          ? [{ callId: block.id, name: block.name, arguments: JSON.stringify(block.input) }]
          : [],
      );
      return {
        calls,
        sample: {
          latencyMs,
          ttftMs: ttftMs ?? latencyMs,
          clientBytes: Buffer.byteLength(body, "utf8"),
          reconnected: false,
          fallback: false,
          timing: null,
          cache,
        },
      };
    },
  };
}
