/**
 * Responses WebSocket-mode turns (`response.create` frames) the way Codex sends them: one socket per
 * agent session, `store` as configured, and after the first turn only the delta
 * (`previous_response_id` + the new `function_call_output`s) — to the simulator directly (E) or to
 * Deltagate (DG-*).
 * Reconnect variants: after every `dropEvery`-th turn the socket is dropped abruptly (a dead mobile
 * link while the agent runs its tool) and the next turn opens a new one, with the same headers
 * (so the same `session-id`). What the client sends then is its `resume` policy:
 * - "full": the whole history without `previous_response_id` — what Codex does on a new socket
 *   (test/support/codex-notes.md), and the only option against OpenAI with store:false, whose
 *   chain lives in the old connection's cache;
 * - "chain-or-full": the delta with `previous_response_id` as if nothing happened, and only if that
 *   is refused with `previous_response_not_found`, the whole history on the same socket (the turn
 *   then counts as a fallback and pays both attempts).
 * Owns the loop's sockets, its history (for full re-sends) and the per-stage timing events
 * (`deltagate.timing`, matched to turns by `response_id`, bench/timing-hook.ts).
 */
import type { ResponseInputItem, Response as ResponsesResponse } from "openai/resources/responses/responses";
import { historyItems, responseCalls } from "./http-transport.ts";
import type { TurnInput, TurnResult, TurnTransport } from "./loop.ts";
import type { ClientWire, TurnCache, TurnSample } from "./metrics.ts";
import { timingFromEvent } from "./timing-hook.ts";
import { BENCH_TOOLS } from "./workload.ts";
import { openWsClient, type ServerEvent, type WsClient } from "./ws-client.ts";

/** How long `close()` waits for the last turn's timing event once any timing event was seen, ms. */
const LAST_TIMING_WAIT_MS = 250;

/** Configuration of a WebSocket transport (one loop). */
export interface WsTransportOptions {
  /** `ws://host:port/v1/responses`. */
  url: string;
  /** Upgrade headers: authorization, `session-id`, the timing opt-in. */
  headers: Record<string, string>;
  perMessageDeflate: boolean;
  model: string;
  store: boolean;
  promptCacheKey: string;
  /** Drop the socket after every this-many turns (0 = never). */
  dropEvery: number;
  resume: "full" | "chain-or-full";
  /** False: every turn sends the whole history without `previous_response_id` (default true). */
  chain?: boolean;
  turnTimeoutMs: number;
  connectTimeoutMs: number;
}

/** A WebSocket transport with its sockets' lifecycle and counters. */
export interface WsTransport extends TurnTransport {
  /** Opens the first socket. @throws {Error} when the handshake fails. */
  open(): Promise<void>;
  /** Ms the first handshake took (0 before `open`). */
  connectMs(): number;
  /** Sockets opened and their bytes (handshakes, frames, compression included). */
  wire(): ClientWire;
  /** Whether the last socket negotiated permessage-deflate. */
  deflate(): boolean;
  /** Closes the current socket (after a short wait for a pending timing event). Never throws. */
  close(): Promise<void>;
}

function errorCode(event: ServerEvent): string {
  const error = event.error;
  if (typeof error === "object" && error !== null && "code" in error) return String(error.code);
  return typeof event.code === "string" ? event.code : "";
}

function errorText(event: ServerEvent): string {
  const error = event.error;
  const message =
    typeof error === "object" && error !== null && "message" in error ? String(error.message) : "";
  return `${String(event.status ?? "")} ${errorCode(event)}: ${message || JSON.stringify(event).slice(0, 300)}`;
}

/** The Response's input and cached tokens (issue #26), or null when it carries no usage. */
export function cacheOf(response: ResponsesResponse): TurnCache | null {
  const usage = response.usage;
  if (!usage) return null;
  return { inputTokens: usage.input_tokens, cachedTokens: usage.input_tokens_details?.cached_tokens ?? 0 };
}

/** Creates the transport; call `open()` before the first turn. */
export function wsTransport(options: WsTransportOptions): WsTransport {
  const history: ResponseInputItem[] = [];
  let previousId: string | null = null;
  let socket: WsClient | null = null;
  const closedSockets: WsClient[] = [];
  let firstConnectMs = 0;
  /** Timing events seen, by response id; samples waiting for theirs. */
  const timingWaiters = new Map<string, TurnSample>();
  let sawTiming = false;
  let lastResponseId: string | null = null;

  const connect = async (): Promise<WsClient> => {
    const client = await openWsClient({
      url: options.url,
      headers: options.headers,
      perMessageDeflate: options.perMessageDeflate,
      connectTimeoutMs: options.connectTimeoutMs,
    });
    socket = client;
    return client;
  };

  const retire = (client: WsClient | null): void => {
    if (client && !closedSockets.includes(client)) closedSockets.push(client);
  };

  const frame = (input: ResponseInputItem[], chain: boolean): string =>
    JSON.stringify({
      type: "response.create",
      model: options.model,
      tools: BENCH_TOOLS,
      store: options.store,
      prompt_cache_key: options.promptCacheKey,
      input,
      ...(chain && previousId ? { previous_response_id: previousId } : {}),
    });

  /** Sends one frame and resolves at its terminal event (or a request-level `error` event). */
  const exchange = (
    client: WsClient,
    text: string,
    started: number,
    onFirstOutput: () => void,
  ): Promise<{ response: ResponsesResponse } | { error: ServerEvent }> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => finish(new Error(`no terminal event within ${options.turnTimeoutMs} ms`)),
        options.turnTimeoutMs,
      );
      function finish(error: Error | null, value?: { response: ResponsesResponse } | { error: ServerEvent }) {
        clearTimeout(timer);
        client.onClose = null;
        if (error || !value) reject(error ?? new Error("no result"));
        else resolve(value);
      }
      client.onEvent = (event) => {
        const reported = timingFromEvent(event);
        if (reported) {
          sawTiming = true;
          const sample = reported.responseId ? timingWaiters.get(reported.responseId) : undefined;
          if (sample) {
            sample.timing = reported.stages;
            timingWaiters.delete(reported.responseId!);
          }
          return;
        }
        if (event.type === "response.output_item.added" || event.type === "response.output_text.delta") {
          onFirstOutput();
        } else if (event.type === "response.completed") {
          finish(null, { response: event.response as ResponsesResponse });
        } else if (event.type === "response.failed" || event.type === "response.incomplete") {
          const response = event.response as ResponsesResponse;
          finish(
            new Error(`${event.type}: ${JSON.stringify(response.error ?? response.incomplete_details)}`),
          );
        } else if (event.type === "error") {
          finish(null, { error: event });
        }
      };
      client.onClose = (why) =>
        finish(
          new Error(`the WebSocket ${why} before the turn completed (${performance.now() - started} ms)`),
        );
      client.send(text);
    });

  return {
    async open() {
      const client = await connect();
      firstConnectMs = client.connectMs;
    },

    connectMs: () => firstConnectMs,

    async turn({ newItems, turn, last }: TurnInput): Promise<TurnResult> {
      const started = performance.now();
      let reconnected = false;
      let client = socket;
      if (!client || client.closed) {
        retire(client);
        client = await connect();
        reconnected = turn > 1;
      }
      let ttftMs: number | null = null;
      const onFirstOutput = (): void => {
        ttftMs ??= performance.now() - started;
      };
      const full = [...history, ...newItems];
      const chain = options.chain !== false && !(reconnected && options.resume === "full");
      let text = chain ? frame(newItems, true) : frame(full, false);
      let clientBytes = Buffer.byteLength(text, "utf8");
      let result = await exchange(client, text, started, onFirstOutput);
      let fallback = false;
      if (
        "error" in result &&
        errorCode(result.error) === "previous_response_not_found" &&
        chain &&
        previousId &&
        options.resume === "chain-or-full"
      ) {
        fallback = true;
        text = frame(full, false);
        clientBytes += Buffer.byteLength(text, "utf8");
        result = await exchange(client, text, started, onFirstOutput);
      }
      if ("error" in result) throw new Error(`error event ${errorText(result.error)}`);
      const latencyMs = performance.now() - started;
      const response = result.response;
      history.push(...newItems, ...historyItems(response));
      previousId = response.id;
      lastResponseId = response.id;
      const sample: TurnSample = {
        latencyMs,
        ttftMs: ttftMs ?? latencyMs,
        clientBytes,
        reconnected,
        fallback,
        timing: null,
        responseId: response.id,
        cache: cacheOf(response),
      };
      timingWaiters.set(response.id, sample);
      if (options.dropEvery > 0 && turn % options.dropEvery === 0 && !last) {
        client.drop();
        retire(client);
        socket = null;
      }
      return { calls: responseCalls(response), sample };
    },

    wire(): ClientWire {
      const all = [...closedSockets, ...(socket && !closedSockets.includes(socket) ? [socket] : [])];
      return {
        connections: all.length,
        upBytes: all.reduce((n, s) => n + s.bytes().up, 0),
        downBytes: all.reduce((n, s) => n + s.bytes().down, 0),
      };
    },

    deflate: () => socket?.deflate ?? closedSockets.at(-1)?.deflate ?? false,

    async close() {
      if (sawTiming && lastResponseId && timingWaiters.has(lastResponseId)) {
        const deadline = Date.now() + LAST_TIMING_WAIT_MS;
        while (timingWaiters.has(lastResponseId) && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }
      const client = socket;
      if (client) {
        client.onClose = null;
        await client.close();
        retire(client);
      }
      socket = null;
    },
  };
}
