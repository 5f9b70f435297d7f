/**
 * WebSocket mode on `GET /v1/responses` (spec §1–§4.2): one JSON text frame per event, client
 * frames `{"type":"response.create", …}` processed strictly one at a time (later frames
 * queue). Each connection keeps a local cache of its latest response(s), so `store:false`
 * chains work within the connection; stored responses are found too. Supports
 * `generate:false` warm-ups, request-level error frames (socket stays open), and the
 * `fail=`, `ws_drop=` and `delay_ms=` directives (1011 close / abrupt drop), plus seeded state
 * loss (`ws_drop_pct=`/`ws_drop_seed=`, ws-faults.ts) and a per-connection response limit
 * (`ws_limit=`). Every connection is logged (ws-connections.ts).
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type RawData, WebSocket, WebSocketServer } from "ws";
import { invalidRequest, previousResponseNotFound, SimError, toSimError, wsErrorFrame } from "./errors.ts";
import { midstreamCutIndex } from "./events.ts";
import { isJsonObject, type JsonObject } from "./json.ts";
import { PrefixCache } from "./prefix-cache.ts";
import { keyFingerprint, type RecordedRequest } from "./recorder.ts";
import { prepareTurn } from "./responses-turn.ts";
import type { SimState } from "./state.ts";
import { ResponseStore } from "./store.ts";
import { runSteps } from "./stream-runner.ts";
import type { WsConnectionRecord } from "./ws-connections.ts";
import { wsLossFor } from "./ws-faults.ts";

/** Per-connection state. */
interface Connection {
  socket: WebSocket;
  /** Latest responses of this connection (size = state.wsCacheSize). */
  cache: ResponseStore;
  /** Prefix cache of everything this connection processed. */
  prefix: PrefixCache;
  /** Aborted when the socket closes. */
  closed: AbortController;
  /** Tail of the sequential frame queue. */
  queue: Promise<void>;
  path: string;
  /** The upgrade's bearer key, fingerprinted (recorder.ts `keyFingerprint`). */
  key: string | null;
  /** This connection's entry in `/_sim/ws-connections`. */
  log: WsConnectionRecord;
}

/**
 * Creates the `ws` server (noServer mode) that `handleUpgrade` feeds.
 * @param perMessageDeflate accept a client's permessage-deflate offer (RFC 7692); off by default.
 */
export function createWsServer(perMessageDeflate = false): WebSocketServer {
  return new WebSocketServer({ noServer: true, perMessageDeflate, maxPayload: 256 * 1024 * 1024 });
}

/** Accepts an upgrade on `/v1/responses` and starts serving the connection. */
export function handleWsUpgrade(
  state: SimState,
  wss: WebSocketServer,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): void {
  wss.handleUpgrade(req, socket, head, (ws) => {
    const conn: Connection = {
      socket: ws,
      cache: new ResponseStore(state.wsCacheSize),
      prefix: new PrefixCache(),
      closed: new AbortController(),
      queue: Promise.resolve(),
      path: (req.url ?? "/v1/responses").split("?")[0] ?? "/v1/responses",
      key: keyFingerprint(req.headers.authorization),
      log: state.wsConnections.open(ws),
    };
    state.log("WS connected on /v1/responses");
    ws.on("close", (code, reason) => {
      conn.closed.abort();
      conn.log.closedAt = Date.now();
      conn.log.closeCode = code;
      conn.log.closeReason = reason.toString("utf8");
      conn.log.closedBy ??= "client";
      state.log(`WS closed (${code})`);
    });
    ws.on("error", () => conn.closed.abort());
    ws.on("message", (data: RawData, isBinary: boolean) => {
      const text = isBinary ? null : rawToString(data);
      conn.queue = conn.queue.then(() => handleFrame(state, conn, text, rawSize(data)));
    });
  });
}

/** OpenAI's error at the 60-minute connection lifetime (brief §1.4, §1.5). */
function connectionLimitReached(): SimError {
  return new SimError(
    400,
    "invalid_request_error",
    "Responses websocket connection limit reached (60 minutes). Create a new websocket connection to continue.",
    "websocket_connection_limit_reached",
  );
}

function rawToString(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString("utf8");
  return data.toString("utf8");
}

function rawSize(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((n, b) => n + b.length, 0);
  return data instanceof ArrayBuffer ? data.byteLength : data.length;
}

function send(conn: Connection, event: unknown): void {
  if (conn.socket.readyState === WebSocket.OPEN) conn.socket.send(JSON.stringify(event));
}

function sendError(state: SimState, conn: Connection, record: RecordedRequest, err: SimError): void {
  send(conn, wsErrorFrame(err));
  record.status = err.status;
  state.recorder.changed();
  state.log(`WS response.create → error ${err.status} ${err.code ?? err.type}`);
}

async function handleFrame(
  state: SimState,
  conn: Connection,
  text: string | null,
  bytes: number,
): Promise<void> {
  if (conn.closed.signal.aborted) return;
  let body: JsonObject | null = null;
  if (text !== null) {
    try {
      const parsed: unknown = JSON.parse(text);
      body = isJsonObject(parsed) ? parsed : null;
    } catch {
      body = null;
    }
  }
  const record = state.recorder.begin("ws", conn.path, text ?? "", body, conn.key);
  record.bytes = bytes;
  record.connectionId = conn.log.id;
  if (!body) {
    sendError(state, conn, record, invalidRequest("Invalid frame: expected a JSON object text frame."));
    return;
  }
  if (body.type === "response.processed") {
    record.status = 200;
    return;
  }
  if (body.type !== "response.create") {
    const type = typeof body.type === "string" ? body.type : String(body.type);
    sendError(
      state,
      conn,
      record,
      invalidRequest(`Invalid event type '${type}'.`, "type", "unknown_event_type"),
    );
    return;
  }
  await handleCreate(state, conn, body, record);
}

async function handleCreate(
  state: SimState,
  conn: Connection,
  body: JsonObject,
  record: RecordedRequest,
): Promise<void> {
  const startMs = Date.now();
  const ordinal = ++conn.log.creates;
  const params: JsonObject = { ...body };
  delete params.type;
  const prevId = typeof body.previous_response_id === "string" ? body.previous_response_id : null;
  let turn: ReturnType<typeof prepareTurn>;
  try {
    turn = prepareTurn(
      state,
      params,
      {
        resolvePrevious: (id) => conn.cache.get(id) ?? state.store.get(id),
        caches: [
          conn.prefix,
          state.prefix.get(typeof body.prompt_cache_key === "string" ? body.prompt_cache_key : null),
        ],
        websocket: true,
      },
      record,
    );
  } catch (e) {
    // A failed continuation evicts the referenced response from the connection cache (§4.2).
    if (prevId !== null) conn.cache.delete(prevId);
    sendError(state, conn, record, toSimError(e));
    return;
  }
  const { wsMaxResponses, wsDropPct, wsDropSeed } = turn.directives;
  if (wsMaxResponses > 0 && conn.log.responses >= wsMaxResponses) {
    record.simulatedFailure = "ws_limit";
    sendError(state, conn, record, connectionLimitReached());
    conn.log.closedBy = "server";
    conn.socket.close(1000, "connection limit reached");
    return;
  }
  const loss = wsLossFor({
    seed: wsDropSeed,
    pct: wsDropPct,
    contextItems: record.contextItemCount ?? 0,
    ordinal,
    continuation: prevId !== null,
  });
  if (loss === "not_found" && prevId !== null) {
    record.simulatedFailure = "not_found";
    conn.cache.delete(prevId);
    sendError(state, conn, record, previousResponseNotFound(prevId));
    return;
  }
  if (turn.directives.wsDrop || loss === "drop_before") {
    record.simulatedFailure = "ws_drop";
    state.recorder.changed();
    state.log("WS simulated drop: terminating socket");
    conn.log.closedBy = "server";
    conn.socket.terminate();
    return;
  }
  const midstream = turn.directives.fail?.kind === "midstream";
  const stopBefore = midstream ? midstreamCutIndex(turn.steps) : turn.steps.length;
  const hold = turn.directives.hold;
  const done = await runSteps(
    turn.steps,
    startMs,
    conn.closed.signal,
    (step) => send(conn, step.event),
    stopBefore,
    hold ? () => state.holds.wait(hold, conn.closed.signal) : undefined,
  );
  if (!done) {
    record.aborted = true;
    state.recorder.changed();
    state.log("WS client went away mid-response");
    return;
  }
  if (midstream) {
    record.simulatedFailure = "midstream";
    state.recorder.changed();
    state.log("WS simulated mid-stream failure: closing 1011");
    conn.log.closedBy = "server";
    conn.socket.close(1011, "simulated upstream failure");
    conn.closed.abort();
    return;
  }
  conn.cache.put(turn.node);
  if (turn.store) state.store.put(turn.node);
  record.status = 200;
  conn.log.responses++;
  if (loss === "drop_after") {
    record.simulatedFailure = "ws_drop_after";
    conn.log.closedBy = "server";
    // Let the terminal event reach the kernel first: terminate() discards what ws still buffers.
    for (let i = 0; i < 100 && conn.socket.bufferedAmount > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    conn.socket.terminate();
  }
  state.recorder.changed();
  const usage = turn.final.usage;
  state.log(
    `WS response.create → ${turn.final.status} ctx=${record.contextItemCount} in=${usage?.input_tokens} cached=${usage?.input_tokens_details.cached_tokens} out=${usage?.output_tokens} (${Date.now() - startMs} ms)`,
  );
}
