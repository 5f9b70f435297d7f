/**
 * Gemini turns straight to the provider (`POST /v1beta/models/{model}:streamGenerateContent?alt=sse`),
 * the way a user of the Gemini API talks to it (scenario GM-direct, issue #26): the whole
 * conversation as `contents` every turn; Gemini's implicit caching needs nothing from the client.
 * Owns the loop's conversation in Gemini form (the developer message becomes `systemInstruction`,
 * the user prompt a user content, the model's parts kept as they came — their `thoughtSignature`s
 * included, which a Gemini 3 model requires back on its function calls — and each turn's
 * `function_call_output`s one user content of `functionResponse` parts, ids and names paired with
 * the calls) and the count of the JSON bytes it sent. Reads the turn's cache from the last
 * chunk's `usageMetadata` (`promptTokenCount`, of which `cachedContentTokenCount`).
 * Source: https://ai.google.dev/api/generate-content,
 * https://ai.google.dev/gemini-api/docs/function-calling,
 * https://ai.google.dev/gemini-api/docs/thought-signatures, https://ai.google.dev/gemini-api/docs/caching.
 */
import { randomUUID } from "node:crypto";
import type { ResponseInputItem } from "openai/resources/responses/responses";
import { parseSse } from "../src/upstream/sse.ts";
import type { FunctionCall, TurnInput, TurnResult, TurnTransport } from "./loop.ts";
import type { LoopFetch } from "./loop-fetch.ts";
import type { TurnCache } from "./metrics.ts";
import { BENCH_TOOLS, textOf } from "./workload.ts";

/** Configuration of a Gemini transport (one loop). */
export interface GeminiTransportOptions {
  /** Base URL including `/v1beta`. */
  baseURL: string;
  apiKey: string;
  model: string;
  /** Extra request headers (session id, timing opt-in: the same bytes as the other direct loops). */
  headers: Record<string, string>;
  loopFetch: LoopFetch;
  turnTimeoutMs: number;
}

type Part = Record<string, unknown>;

interface Content {
  role: "user" | "model";
  parts: Part[];
}

interface UsageMetadata {
  promptTokenCount?: number;
  cachedContentTokenCount?: number;
}

/** The workload's tools as Gemini function declarations (JSON Schema as `parametersJsonSchema`). */
export const GEMINI_TOOLS = [
  {
    functionDeclarations: BENCH_TOOLS.map((tool) => ({
      name: tool.name,
      description: tool.description ?? "",
      parametersJsonSchema: tool.parameters ?? { type: "object" },
    })),
  },
];

/** The turn's prompt and cached tokens from Gemini's usage metadata. */
export function geminiCache(usage: UsageMetadata): TurnCache {
  return { inputTokens: usage.promptTokenCount ?? 0, cachedTokens: usage.cachedContentTokenCount ?? 0 };
}

/** Creates a Gemini transport for one loop. */
export function geminiTransport(options: GeminiTransportOptions): TurnTransport {
  let system = "";
  const contents: Content[] = [];
  /** The name and provider id of each call the loop knows, by the call id the loop uses. */
  const callsById = new Map<string, { name: string; id: string | null }>();

  const append = (items: ResponseInputItem[]): void => {
    const responses: Part[] = [];
    for (const item of items) {
      if (item.type === "function_call_output" && item.call_id) {
        const call = callsById.get(item.call_id);
        if (!call) throw new Error(`no function call ${item.call_id} to answer`);
        responses.push({
          functionResponse: {
            ...(call.id ? { id: call.id } : {}),
            name: call.name,
            response: { output: textOf(item.output) },
          },
        });
      } else if (item.type === "message" && (item.role === "developer" || item.role === "system")) {
        system += textOf(item.content);
      } else if (item.type === "message" && item.role === "user") {
        contents.push({ role: "user", parts: [{ text: textOf(item.content) }] });
      } else {
        throw new Error(`the Gemini transport cannot send a ${item.type} item`);
      }
    }
    if (responses.length > 0) contents.push({ role: "user", parts: responses });
  };

  return {
    async turn({ newItems }: TurnInput): Promise<TurnResult> {
      append(newItems);
      const body = JSON.stringify({
        systemInstruction: { parts: [{ text: system }] },
        tools: GEMINI_TOOLS,
        contents,
      });
      await new Promise((resolve) => setImmediate(resolve)); // as in http-transport.ts
      const started = performance.now();
      const signal = AbortSignal.timeout(options.turnTimeoutMs);
      const url = `${options.baseURL}/models/${options.model}:streamGenerateContent?alt=sse`;
      const response = await options.loopFetch.fetch(url, {
        method: "POST",
        headers: { ...options.headers, "x-goog-api-key": options.apiKey, "content-type": "application/json" },
        body,
        signal,
      });
      if (!response.ok || !response.body) {
        throw new Error(
          `streamGenerateContent answered ${response.status}: ${(await response.text()).slice(0, 300)}`,
        );
      }
      let ttftMs: number | null = null;
      let cache: TurnCache | null = null;
      let finishReason: string | null = null;
      const parts: Part[] = [];
      for await (const event of parseSse(response.body, signal)) {
        const chunk = JSON.parse(event.data) as {
          candidates?: Array<{ content?: { parts?: Part[] }; finishReason?: string }>;
          usageMetadata?: UsageMetadata;
          error?: unknown;
        };
        if (chunk.error) throw new Error(`Gemini stream error: ${event.data.slice(0, 300)}`);
        const candidate = chunk.candidates?.[0];
        const got = candidate?.content?.parts ?? [];
        if (got.some((part) => part.thought !== true)) ttftMs ??= performance.now() - started;
        parts.push(...got);
        if (chunk.usageMetadata) cache = geminiCache(chunk.usageMetadata);
        if (candidate?.finishReason) finishReason = candidate.finishReason;
      }
      const latencyMs = performance.now() - started;
      if (finishReason === null) throw new Error("the Gemini stream ended without a finishReason");
      // The model's parts go back as they came, thought signatures included.
      contents.push({ role: "model", parts });
      const calls: FunctionCall[] = parts.flatMap((part) => {
        const call = part.functionCall as { id?: string; name: string; args?: unknown } | undefined;
        if (!call) return [];
        const callId = call.id ?? `call_${randomUUID()}`;
        callsById.set(callId, { name: call.name, id: call.id ?? null });
        return [{ callId, name: call.name, arguments: JSON.stringify(call.args ?? {}) }];
      });
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
