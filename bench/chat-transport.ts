/**
 * Chat Completions turns (`POST /v1/chat/completions`, `stream: true` with usage) with the
 * `openai` SDK: the whole conversation as `messages` every turn — the only way to talk to an
 * upstream without a delta mode (scenario CH).
 * Owns the loop's message history (Responses items from the loop become chat messages: the
 * developer and user messages as they are, each `function_call_output` as a `tool` message after
 * the assistant message that carried the calls) and the count of the JSON bytes it sent.
 */
import type {
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageParam,
} from "openai/resources/chat/completions";
import type { ResponseInputItem } from "openai/resources/responses/responses";
import type { FunctionCall, TurnInput, TurnResult, TurnTransport } from "./loop.ts";
import type { LoopFetch } from "./loop-fetch.ts";
import { loopClient } from "./sdk-client.ts";
import { CHAT_TOOLS, textOf } from "./workload.ts";

/** Configuration of a Chat Completions transport. */
export interface ChatTransportOptions {
  /** Base URL including `/v1`. */
  baseURL: string;
  apiKey: string;
  model: string;
  promptCacheKey: string;
  loopFetch: LoopFetch;
  turnTimeoutMs: number;
}

/** A loop input item as a chat message. */
function toMessage(item: ResponseInputItem): ChatCompletionMessageParam {
  if (item.type === "function_call_output" && item.call_id) {
    return { role: "tool", tool_call_id: item.call_id, content: textOf(item.output) };
  }
  if (item.type === "message" && (item.role === "developer" || item.role === "user")) {
    return { role: item.role, content: textOf(item.content) };
  }
  throw new Error(`the chat transport cannot send a ${item.type} item`);
}

/** Creates a Chat Completions transport for one loop. */
export function chatTransport(options: ChatTransportOptions): TurnTransport {
  const { client, lastBodyBytes } = loopClient(options);
  const messages: ChatCompletionMessageParam[] = [];

  return {
    async turn({ newItems }: TurnInput): Promise<TurnResult> {
      messages.push(...newItems.map(toMessage));
      await new Promise((resolve) => setImmediate(resolve)); // as in http-transport.ts
      const started = performance.now();
      let ttftMs: number | null = null;
      const stream = await client.chat.completions.create(
        {
          model: options.model,
          messages: [...messages],
          tools: CHAT_TOOLS,
          stream: true,
          stream_options: { include_usage: true },
          prompt_cache_key: options.promptCacheKey,
        },
        { signal: AbortSignal.timeout(options.turnTimeoutMs) },
      );
      const clientBytes = lastBodyBytes();
      const calls = new Map<number, FunctionCall>();
      let text = "";
      let finished = false;
      for await (const chunk of stream) {
        const choice = chunk.choices[0];
        if (!choice) continue;
        const delta = choice.delta;
        if (ttftMs === null && ((delta.content ?? "") !== "" || (delta.tool_calls?.length ?? 0) > 0)) {
          ttftMs = performance.now() - started;
        }
        text += delta.content ?? "";
        for (const call of delta.tool_calls ?? []) {
          const current = calls.get(call.index) ?? { callId: "", name: "", arguments: "" };
          if (call.id) current.callId = call.id;
          if (call.function?.name) current.name = call.function.name;
          current.arguments += call.function?.arguments ?? "";
          calls.set(call.index, current);
        }
        if (choice.finish_reason) finished = true;
      }
      const latencyMs = performance.now() - started;
      if (!finished) throw new Error("the chat stream ended without a finish_reason");
      const made = [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
      const toolCalls: ChatCompletionMessageFunctionToolCall[] = made.map((call) => ({
        id: call.callId,
        type: "function",
        function: { name: call.name, arguments: call.arguments },
      }));
      messages.push(
        toolCalls.length > 0
          ? { role: "assistant", content: text === "" ? null : text, tool_calls: toolCalls }
          : { role: "assistant", content: text },
      );
      return {
        calls: made,
        sample: {
          latencyMs,
          ttftMs: ttftMs ?? latencyMs,
          clientBytes,
          reconnected: false,
          fallback: false,
          timing: null,
        },
      };
    },
  };
}
