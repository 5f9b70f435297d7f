/**
 * HTTP/SSE turns (`POST /v1/responses`, `stream: true`) with the `openai` SDK, in two styles:
 * - "full-history": store:false, every turn re-sends the whole conversation (prompt, every
 *   earlier output item, every tool output) — an HTTP agent loop without server-side state;
 * - "delta": store:true, `previous_response_id` + only the new items (Deltagate's HTTP path;
 *   OpenAI's HTTP API requires stored responses for `previous_response_id`).
 * Owns the exact count of bytes sent: a `fetch` wrapper measures each request body as the SDK
 * serialized it.
 * Connections: Node's `fetch` (undici's global pool) keeps them alive, so a loop's turns share one
 * connection (the link profile's proxy counts connections per loop, which shows it).
 */
import OpenAI from "openai";
import type {
  Response as OpenAIResponse,
  ResponseCreateParamsStreaming,
  ResponseInputItem,
} from "openai/resources/responses/responses";
import type { TurnInput, TurnResult, TurnTransport } from "./loop.ts";
import { BENCH_TOOLS } from "./workload.ts";

/** Longest one turn may take, in ms. */
export const TURN_TIMEOUT_MS = 30_000;

/** Configuration of an HTTP transport. */
export interface HttpTransportOptions {
  /** Base URL including `/v1`. */
  baseURL: string;
  apiKey: string;
  model: string;
  style: "full-history" | "delta";
  /** `prompt_cache_key` to send (full-history style: a real loop sends one per conversation). */
  promptCacheKey?: string;
}

/** Byte length of a request body the SDK handed to `fetch`. */
function bodyBytes(body: unknown): number {
  if (body === undefined || body === null) return 0;
  if (typeof body === "string") return Buffer.byteLength(body, "utf8");
  if (ArrayBuffer.isView(body)) return body.byteLength;
  if (body instanceof ArrayBuffer) return body.byteLength;
  throw new Error(`cannot measure a request body of type ${Object.prototype.toString.call(body)}`);
}

/** Output items carried into the next full-history request (the simulator emits only these two). */
function historyItems(response: OpenAIResponse): ResponseInputItem[] {
  return response.output.flatMap((item): ResponseInputItem[] =>
    item.type === "message" || item.type === "function_call" ? [item] : [],
  );
}

/** Creates an HTTP transport for one loop (it holds that loop's history). */
export function httpTransport(options: HttpTransportOptions): TurnTransport {
  let lastBodyBytes = 0;
  const countingFetch: typeof fetch = (input, init) => {
    lastBodyBytes = bodyBytes(init?.body);
    return fetch(input, init);
  };
  const client = new OpenAI({
    apiKey: options.apiKey,
    baseURL: options.baseURL,
    maxRetries: 0,
    timeout: TURN_TIMEOUT_MS,
    fetch: countingFetch,
  });
  const history: ResponseInputItem[] = [];

  return {
    async turn({ newItems, previous }: TurnInput): Promise<TurnResult> {
      let body: ResponseCreateParamsStreaming;
      if (options.style === "full-history") {
        if (previous) history.push(...historyItems(previous));
        history.push(...newItems);
        body = { model: options.model, tools: BENCH_TOOLS, store: false, stream: true, input: [...history] };
        if (options.promptCacheKey) body.prompt_cache_key = options.promptCacheKey;
      } else {
        body = { model: options.model, tools: BENCH_TOOLS, store: true, stream: true, input: newItems };
        if (previous) body.previous_response_id = previous.id;
      }
      // A real agent runs its tool between turns; this one answers at once. Undici hands a
      // kept-alive connection back to its pool only on a later macrotask, so without this yield
      // every other request would open a fresh connection (and pay a handshake on a real link).
      await new Promise((resolve) => setImmediate(resolve));
      const started = performance.now();
      let ttftMs: number | null = null;
      const stream = await client.responses.create(body, { signal: AbortSignal.timeout(TURN_TIMEOUT_MS) });
      const clientBytes = lastBodyBytes;
      let result: TurnResult | null = null;
      // Read to the end rather than break: aborting the body would close the kept-alive connection.
      for await (const event of stream) {
        if (
          ttftMs === null &&
          (event.type === "response.output_text.delta" || event.type === "response.output_item.added")
        ) {
          ttftMs = performance.now() - started;
        }
        if (event.type === "response.completed") {
          const latencyMs = performance.now() - started;
          result = {
            response: event.response,
            sample: { latencyMs, ttftMs: ttftMs ?? latencyMs, clientBytes },
          };
        }
        if (event.type === "response.failed" || event.type === "response.incomplete") {
          throw new Error(
            `${event.type}: ${JSON.stringify(event.response.error ?? event.response.incomplete_details)}`,
          );
        }
        if (event.type === "error") throw new Error(`error event: ${event.code ?? ""} ${event.message}`);
      }
      if (!result) throw new Error("the SSE stream ended without a terminal event");
      return result;
    },
  };
}
