/**
 * Responses API turns over HTTP/SSE (`POST /v1/responses`, `stream: true`) with the `openai` SDK,
 * in two styles:
 * - "full-history": store:false, every turn re-sends the whole conversation — an HTTP agent loop
 *   without server-side state (scenario A);
 * - "chained": store:true, `previous_response_id` + only the new items (OpenAI's HTTP API requires
 *   stored responses for `previous_response_id`; scenarios A2 and DG-h2ws).
 * Owns the loop's history (full-history style) and the exact count of the JSON bytes it sent.
 * Connections: the per-loop `fetch` (loop-fetch.ts) keeps one connection alive for the loop.
 */
import type {
  ResponseCreateParamsStreaming,
  ResponseFunctionToolCall,
  ResponseInputItem,
  Response as ResponsesResponse,
} from "openai/resources/responses/responses";
import type { FunctionCall, TurnInput, TurnResult, TurnTransport } from "./loop.ts";
import type { LoopFetch } from "./loop-fetch.ts";
import { loopClient } from "./sdk-client.ts";
import { mergeTimings, parseServerTiming, timingFromEvent } from "./timing-hook.ts";
import { BENCH_TOOLS } from "./workload.ts";

/** Configuration of an HTTP transport. */
export interface HttpTransportOptions {
  /** Base URL including `/v1`. */
  baseURL: string;
  apiKey: string;
  model: string;
  style: "full-history" | "chained";
  /** `store` of a full-history loop (default false; the SDKs' own default is true). */
  store?: boolean;
  /** Sent on every request (a real agent sends one per conversation). */
  promptCacheKey: string;
  /** Extra request headers (session id, timing opt-in). */
  headers: Record<string, string>;
  loopFetch: LoopFetch;
  turnTimeoutMs: number;
}

/** Output items carried into the next request of a full-history loop. */
export function historyItems(response: ResponsesResponse): ResponseInputItem[] {
  return response.output.flatMap((item): ResponseInputItem[] =>
    item.type === "message" || item.type === "function_call" ? [item] : [],
  );
}

/** The function calls of a terminal Response. */
export function responseCalls(response: ResponsesResponse): FunctionCall[] {
  return response.output
    .filter((item): item is ResponseFunctionToolCall => item.type === "function_call")
    .map((call) => ({ callId: call.call_id, name: call.name, arguments: call.arguments }));
}

/** Creates an HTTP transport for one loop. */
export function httpTransport(options: HttpTransportOptions): TurnTransport {
  const { client, lastBodyBytes } = loopClient(options);
  const history: ResponseInputItem[] = [];
  let previousId: string | null = null;

  return {
    async turn({ newItems }: TurnInput): Promise<TurnResult> {
      let body: ResponseCreateParamsStreaming;
      const common = {
        model: options.model,
        tools: BENCH_TOOLS,
        stream: true as const,
        prompt_cache_key: options.promptCacheKey,
      };
      if (options.style === "full-history") {
        history.push(...newItems);
        body = { ...common, store: options.store ?? false, input: [...history] };
      } else {
        body = { ...common, store: true, input: newItems };
        if (previousId) body.previous_response_id = previousId;
      }
      // A real agent runs its tool between turns; this one answers at once. Give the previous
      // response's socket one macrotask to return to the agent's pool, as it would by then.
      await new Promise((resolve) => setImmediate(resolve));
      const started = performance.now();
      let ttftMs: number | null = null;
      const { data: stream, response: httpResponse } = await client.responses
        .create(body, { signal: AbortSignal.timeout(options.turnTimeoutMs), headers: options.headers })
        .withResponse();
      const clientBytes = lastBodyBytes();
      let timing = parseServerTiming(httpResponse.headers.get("server-timing"));
      let terminal: ResponsesResponse | null = null;
      let latencyMs = 0;
      // Read to the end rather than break: aborting the body would close the kept-alive connection
      // (and a timing event may follow the terminal event).
      for await (const event of stream) {
        const reported = timingFromEvent(event);
        if (reported) {
          timing = mergeTimings(timing, reported.stages);
          continue;
        }
        if (
          ttftMs === null &&
          (event.type === "response.output_text.delta" || event.type === "response.output_item.added")
        ) {
          ttftMs = performance.now() - started;
        }
        if (event.type === "response.completed") {
          latencyMs = performance.now() - started;
          terminal = event.response;
        } else if (event.type === "response.failed" || event.type === "response.incomplete") {
          throw new Error(
            `${event.type}: ${JSON.stringify(event.response.error ?? event.response.incomplete_details)}`,
          );
        } else if (event.type === "error") {
          throw new Error(`error event: ${event.code ?? ""} ${event.message}`);
        }
      }
      if (!terminal) throw new Error("the SSE stream ended without a terminal event");
      if (options.style === "full-history") history.push(...historyItems(terminal));
      previousId = terminal.id;
      return {
        calls: responseCalls(terminal),
        sample: {
          latencyMs,
          ttftMs: ttftMs ?? latencyMs,
          clientBytes,
          reconnected: false,
          fallback: false,
          timing,
          responseId: terminal.id,
        },
      };
    },
  };
}
