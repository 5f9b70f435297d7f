/**
 * The embedded reference simulator's HTTP server: an OpenAI-compatible inference SIMULATOR
 * (not a model) serving `/v1/models`, `/v1/responses` (HTTP, SSE and WebSocket mode),
 * `/v1/responses/compact`, `/v1/responses/input_tokens`,
 * `/v1/chat/completions`, `/v1/moderations`, Anthropic's `/v1/messages` (simulator/anthropic/),
 * Gemini's `/v1beta/models/{model}:generateContent` and `:streamGenerateContent` (and `/v1/`)
 * (simulator/gemini/), plus the inspection API `/_sim/requests`.
 * Accepts any bearer token and logs nothing secret. `startSimulator` is the entry point for
 * `npm start`, tests and benchmarks.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { handleMessages } from "./anthropic/messages.ts";
import { PromptCache } from "./anthropic/prompt-cache.ts";
import { ThinkingSigner } from "./anthropic/signatures.ts";
import { handleChatCompletions } from "./chat-completions.ts";
import { handleCompact, handleInputTokens, newCompactionSecret } from "./compaction.ts";
import { errorEnvelope, invalidRequest, SimError, toSimError } from "./errors.ts";
import { GENERATE_PATH, handleGenerate } from "./gemini/generate.ts";
import { ImplicitCache } from "./gemini/implicit-cache.ts";
import { ThoughtSigner } from "./gemini/signatures.ts";
import { Holds } from "./holds.ts";
import { sendError, sendJson } from "./http-util.ts";
import { DEFAULT_MODERATION, handleModerations } from "./moderations.ts";
import { KeyedPrefixCache } from "./prefix-cache.ts";
import { ReasoningLedger } from "./reasoning.ts";
import { Recorder, recordToJson } from "./recorder.ts";
import { handleResponsesHttp } from "./responses-http.ts";
import { DEFAULT_MODEL } from "./responses-turn.ts";
import { createWsServer, handleWsUpgrade } from "./responses-ws.ts";
import type { SimState } from "./state.ts";
import { DEFAULT_CONNECTION_CACHE_SIZE, ResponseStore } from "./store.ts";
import { DEFAULT_TIMING } from "./timing.ts";
import { WsConnectionLog } from "./ws-connections.ts";

/** Options of `startSimulator`. All optional. */
export interface SimulatorOptions {
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** Bind address (default 127.0.0.1). */
  host?: string;
  /** Suppress log lines (default false). */
  quiet?: boolean;
  /** Output decode speed, tokens per second (default 1000). */
  decodeTokensPerSecond?: number;
  /** Prefill cost per uncached input token, ms (default 0.05). */
  prefillMsPerToken?: number;
  /** Fixed latency before the first event, ms (default 5). */
  firstTokenOverheadMs?: number;
  /** Responses each WS connection keeps in its local cache (default 1, like OpenAI). */
  wsCacheSize?: number;
  /** Latency of every `/v1/moderations` answer, ms (default 0). */
  moderationLatencyMs?: number;
  /** Extra words `/v1/moderations` flags (default none; "attack" and `[sim:flag]` always flag). */
  moderationFlagWords?: readonly string[];
  /**
   * Validate every request like the strictest known upstream (default true): OpenAI's rules
   * plus tool-group adjacency (simulator/README.md, "Strict validation"). False keeps the
   * lenient behaviour (call_id pairing only).
   */
  strict?: boolean;
  /**
   * Accept permessage-deflate when a WebSocket client offers it (default false). Codex offers it;
   * the benchmark turns it on so a direct client gets the same compression a gateway could give.
   */
  wsPerMessageDeflate?: boolean;
  /**
   * Anthropic `/v1/messages`: the minimum cacheable prompt length, tokens (default 1024, the
   * documented minimum of Claude Sonnet and Opus models).
   */
  anthropicCacheMinTokens?: number;
  /**
   * Gemini `generateContent`: the minimum prefix implicit caching reads, tokens (default 1024,
   * the documented minimum of Gemini Flash models).
   */
  geminiCacheMinTokens?: number;
}

/** A started simulator. */
export interface RunningSimulator {
  /** Base URL without `/v1`, e.g. "http://127.0.0.1:8788". */
  url: string;
  port: number;
  /** Stops listening, closes WebSockets and open connections. */
  close(): Promise<void>;
  /** Every request received, for assertions. */
  recorder: Recorder;
}

/** Model id listed by `/v1/models` (any model name is accepted in requests). */
export const SIM_MODEL_ID = DEFAULT_MODEL;

const CREATED_AT = Math.floor(Date.now() / 1000);

async function route(state: SimState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", "http://simulator.local");
  const path = url.pathname.replace(/\/+$/, "") || "/";
  const method = req.method ?? "GET";
  if (method === "GET" && path === "/v1/models") {
    const model = { id: SIM_MODEL_ID, object: "model", created: CREATED_AT, owned_by: "deltagate-simulator" };
    return sendJson(res, 200, { object: "list", data: [model] });
  }
  if (method === "GET" && path.startsWith("/v1/models/")) {
    const id = decodeURIComponent(path.slice("/v1/models/".length));
    return sendJson(res, 200, { id, object: "model", created: CREATED_AT, owned_by: "deltagate-simulator" });
  }
  if (method === "POST" && path === "/v1/responses") return handleResponsesHttp(state, req, res);
  if (method === "POST" && path === "/v1/responses/compact") return handleCompact(state, req, res);
  if (method === "POST" && path === "/v1/responses/input_tokens") return handleInputTokens(state, req, res);
  if (method === "GET" && path.startsWith("/v1/responses/")) {
    const id = decodeURIComponent(path.slice("/v1/responses/".length));
    const node = state.store.get(id);
    if (!node)
      throw new SimError(404, "invalid_request_error", `Response with id '${id}' not found.`, null, null);
    return sendJson(res, 200, node.response);
  }
  if (method === "POST" && path === "/v1/messages") return handleMessages(state, req, res);
  const generate = method === "POST" ? GENERATE_PATH.exec(path) : null;
  if (generate?.[1] && generate[2] && generate[3]) {
    const model = decodeURIComponent(generate[2]);
    return handleGenerate(state, req, res, url, { version: generate[1], model, method: generate[3] });
  }
  if (method === "POST" && path === "/v1/chat/completions") return handleChatCompletions(state, req, res);
  if (method === "POST" && path === "/v1/moderations") return handleModerations(state, req, res);
  if (method === "GET" && path === "/_sim/requests") {
    const contains = url.searchParams.get("contains") ?? undefined;
    return sendJson(res, 200, { data: state.recorder.list(contains).map(recordToJson) });
  }
  if (method === "GET" && path === "/_sim/ws-connections") {
    const ids = url.searchParams.get("ids");
    const filter = ids ? new Set(ids.split(",").map(Number)) : undefined;
    return sendJson(res, 200, { data: state.wsConnections.list(filter) });
  }
  if (method === "POST" && path === "/_sim/release") {
    const hold = url.searchParams.get("hold");
    if (!hold) throw new SimError(400, "invalid_request_error", "Missing 'hold'.", null, "hold");
    state.holds.release(hold);
    return sendJson(res, 200, { released: hold });
  }
  if (method === "DELETE" && path === "/_sim/requests") {
    state.recorder.clear();
    return sendJson(res, 200, { deleted: true });
  }
  if (method === "GET" && path === "/v1/responses") {
    throw new SimError(426, "invalid_request_error", "GET /v1/responses requires a WebSocket upgrade.");
  }
  throw new SimError(404, "invalid_request_error", `Invalid URL (${method} ${path})`);
}

/**
 * Starts the simulator and resolves once it listens. Rejects if the port cannot be bound.
 * Logs `[simulator] listening on …` unless `quiet`.
 */
export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const host = options.host ?? "127.0.0.1";
  const quiet = options.quiet ?? false;
  const recorder = new Recorder();
  const state: SimState = {
    timing: {
      firstTokenOverheadMs: options.firstTokenOverheadMs ?? DEFAULT_TIMING.firstTokenOverheadMs,
      prefillMsPerToken: options.prefillMsPerToken ?? DEFAULT_TIMING.prefillMsPerToken,
      decodeTokensPerSecond: options.decodeTokensPerSecond ?? DEFAULT_TIMING.decodeTokensPerSecond,
    },
    store: new ResponseStore(),
    prefix: new KeyedPrefixCache(),
    recorder,
    wsConnections: new WsConnectionLog(),
    wsCacheSize: options.wsCacheSize ?? DEFAULT_CONNECTION_CACHE_SIZE,
    moderation: {
      latencyMs: options.moderationLatencyMs ?? DEFAULT_MODERATION.latencyMs,
      flagWords: options.moderationFlagWords ?? DEFAULT_MODERATION.flagWords,
    },
    strict: options.strict ?? true,
    reasoning: new ReasoningLedger(),
    holds: new Holds(),
    compactionSecret: newCompactionSecret(),
    anthropic: {
      cache: new PromptCache(options.anthropicCacheMinTokens ?? 1024),
      signer: new ThinkingSigner(),
    },
    gemini: {
      cache: new ImplicitCache(options.geminiCacheMinTokens ?? 1024),
      signer: new ThoughtSigner(),
    },
    log: quiet ? () => {} : (line) => console.log(`[simulator] ${line}`),
  };
  const server = createServer({ noDelay: true, keepAlive: true }, (req, res) => {
    route(state, req, res).catch((e: unknown) => {
      const err = toSimError(e);
      if (!res.headersSent) sendError(res, err);
      else res.destroy();
      if (err.status >= 500) state.log(`internal error: ${err.message}`);
    });
  });
  const wss = createWsServer(options.wsPerMessageDeflate ?? false);
  server.on("upgrade", (req, socket, head) => {
    const path = (req.url ?? "/").split("?")[0]?.replace(/\/+$/, "");
    if (path !== "/v1/responses") {
      const body = JSON.stringify(errorEnvelope(invalidRequest(`Invalid URL (GET ${path})`)));
      socket.end(
        `HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      return;
    }
    handleWsUpgrade(state, wss, req, socket, head);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  state.log(`listening on ${url} (reference simulator, not a model)`);
  return {
    url,
    port,
    recorder,
    close: async () => {
      for (const client of wss.clients) client.terminate();
      wss.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
