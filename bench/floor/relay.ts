/**
 * The floor relay's Durable Object: one per session, the least a Responses WebSocket-mode relay
 * on Workers does per turn, written as a competent engineer would write it and no faster:
 * - the client socket is accepted with the hibernation API (`ctx.acceptWebSocket`), as Deltagate's;
 * - one outbound WebSocket to the upstream is opened as soon as the client connects (the first
 *   route, as Deltagate warms its first model for a client that announces none:
 *   src/session/warm-on-connect.ts) and kept for the session's turns; a frame for a model routed
 *   elsewhere replaces it;
 * - every frame is parsed and re-stringified, both ways (a relay that looks at nothing would not
 *   be a gateway);
 * - a terminal event of a stored response (`response.store` not false) is written to SQLite
 *   before it is forwarded: the write is synchronous and the runtime's output gate holds the
 *   `send` until it is durable (https://developers.cloudflare.com/durable-objects/api/sqlite-storage-api/,
 *   https://blog.cloudflare.com/durable-objects-easy-fast-correct-choose-three/); a store:false
 *   response writes nothing, as nothing of it is to be kept.
 * Nothing else: no auth beyond the Worker's key check, no limits, no history, no safety checks,
 * no timing, no log line. Invariant: frames keep their order in each direction (a frame that
 * waits for the upstream's handshake is sent before any later one: the handshake's continuations
 * run before the next event is delivered).
 */
import { DurableObject } from "cloudflare:workers";
import { type FloorRoutes, parseFloorRoutes } from "./routes.ts";

/** The floor Worker's bindings (bench/floor/wrangler.toml and the env file bench/stack.ts writes). */
export interface FloorEnv {
  RELAYS: DurableObjectNamespace;
  /** The one client key (`Authorization: Bearer …`). */
  FLOOR_API_KEY: string;
  /** The routing table, JSON (routes.ts). */
  UPSTREAMS: string;
  UPSTREAM_API_KEY: string;
}

/** Events that end a response (https://platform.openai.com/docs/api-reference/responses-streaming). */
const TERMINAL = new Set(["response.completed", "response.failed", "response.incomplete"]);
/** Close codes a server may not send (RFC 6455 §7.4.1). */
const RESERVED_CLOSE_CODES = new Set([1004, 1005, 1006, 1015]);
const decoder = new TextDecoder();

/** The session's upstream socket: the URL it goes to, its handshake, and the socket once open. */
class Upstream {
  readonly url: string;
  open: WebSocket | null = null;
  readonly ready: Promise<WebSocket>;
  constructor(url: string, handshake: (upstream: Upstream) => Promise<WebSocket>) {
    this.url = url;
    this.ready = handshake(this);
  }
}

/** The shape of an upstream event the relay looks at. */
interface UpstreamEventView {
  type?: unknown;
  response?: { id?: unknown; store?: unknown };
}

function errorEvent(status: number, message: string): string {
  return JSON.stringify({
    type: "error",
    status,
    error: { type: status >= 500 ? "server_error" : "invalid_request_error", code: null, message },
  });
}

function text(data: string | ArrayBuffer): string {
  return typeof data === "string" ? data : decoder.decode(data);
}

/** One session of the floor relay. */
export class FloorRelay extends DurableObject<FloorEnv> {
  readonly #routes: FloorRoutes;
  /** The client socket replies go to: the latest that connected or sent a frame. */
  #client: WebSocket | null = null;
  #upstream: Upstream | null = null;

  constructor(ctx: DurableObjectState, env: FloorEnv) {
    super(ctx, env);
    this.#routes = parseFloorRoutes(env.UPSTREAMS);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS responses (id TEXT PRIMARY KEY, event TEXT NOT NULL)");
  }

  /** The client's upgrade (the Worker checked its key): accept it and warm the upstream. */
  override async fetch(_request: Request): Promise<Response> {
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server);
    this.#client = server;
    if (this.#routes.first) this.#connect(this.#routes.first).catch(() => {}); // its first turn reports it
    return new Response(null, { status: 101, webSocket: client });
  }

  /** Hibernation handler: a client frame, parsed and re-stringified, to the model's upstream. */
  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    this.#client = ws;
    let frame: Record<string, unknown>;
    try {
      frame = JSON.parse(text(message)) as Record<string, unknown>;
    } catch {
      ws.send(errorEvent(400, "The frame is not JSON."));
      return;
    }
    const url = typeof frame.model === "string" ? this.#routes.byModel.get(frame.model) : this.#upstream?.url;
    if (!url) {
      ws.send(errorEvent(400, `No route for model ${JSON.stringify(frame.model ?? null)}.`));
      return;
    }
    const out = JSON.stringify(frame);
    const open = this.#upstream?.url === url ? this.#upstream.open : null;
    if (open) {
      open.send(out);
      return;
    }
    try {
      (await this.#connect(url)).send(out);
    } catch (cause) {
      ws.send(errorEvent(502, `The upstream is unavailable (${String(cause)}).`));
    }
  }

  /** Hibernation handler: the client left; its upstream socket goes with it. */
  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.#clientGone(ws);
    try {
      ws.close(RESERVED_CLOSE_CODES.has(code) ? 1000 : code, reason.slice(0, 120));
    } catch {
      // already closed (the runtime may answer the Close frame itself)
    }
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    this.#clientGone(ws);
  }

  #clientGone(ws: WebSocket): void {
    if (this.#client !== ws) return;
    this.#client = null;
    const upstream = this.#upstream;
    this.#upstream = null;
    upstream?.ready.then((socket) => socket.close(1000, "client gone")).catch(() => {});
  }

  /** The upstream socket to `url`: the open one, or a new handshake (replacing one to elsewhere). */
  #connect(url: string): Promise<WebSocket> {
    const current = this.#upstream;
    if (current?.url === url) return current.ready;
    current?.ready.then((socket) => socket.close(1000, "rerouted")).catch(() => {});
    const upstream = new Upstream(url, (u) => this.#handshake(u));
    // A failed handshake is reported by the frame that waits for it; the next frame tries again.
    upstream.ready.catch(() => {
      if (this.#upstream === upstream) this.#upstream = null;
    });
    this.#upstream = upstream;
    return upstream.ready;
  }

  /** Opens `upstream`'s socket with a fetch upgrade (https://developers.cloudflare.com/workers/examples/websockets/). */
  async #handshake(upstream: Upstream): Promise<WebSocket> {
    const response = await fetch(upstream.url, {
      headers: { upgrade: "websocket", authorization: `Bearer ${this.env.UPSTREAM_API_KEY}` },
    });
    const socket = response.webSocket;
    if (response.status !== 101 || !socket) throw new Error(`upgrade answered ${response.status}`);
    socket.binaryType = "arraybuffer";
    socket.accept();
    socket.addEventListener("message", (event) => this.#fromUpstream(upstream, text(event.data)));
    socket.addEventListener("close", () => this.#upstreamGone(upstream));
    socket.addEventListener("error", () => this.#upstreamGone(upstream));
    upstream.open = socket;
    return socket;
  }

  /** One upstream event: parsed, re-stringified, stored when it ends a stored response, forwarded. */
  #fromUpstream(upstream: Upstream, data: string): void {
    if (this.#upstream !== upstream) return; // a replaced socket's last words
    let event: UpstreamEventView;
    try {
      event = JSON.parse(data) as UpstreamEventView;
    } catch {
      this.#client?.close(1011, "the upstream sent a frame that is not JSON");
      return;
    }
    const out = JSON.stringify(event);
    const response = event.response;
    if (
      typeof event.type === "string" &&
      TERMINAL.has(event.type) &&
      response?.store !== false &&
      typeof response?.id === "string"
    ) {
      this.ctx.storage.sql.exec(
        "INSERT OR REPLACE INTO responses (id, event) VALUES (?, ?)",
        response.id,
        out,
      );
    }
    try {
      this.#client?.send(out);
    } catch {
      // the client is gone: webSocketClose cleans up
    }
  }

  /** The current upstream socket closed or failed: the client hears it, the next frame reconnects. */
  #upstreamGone(upstream: Upstream): void {
    if (this.#upstream !== upstream) return;
    this.#upstream = null;
    try {
      this.#client?.send(errorEvent(502, "The upstream connection closed."));
    } catch {
      // the client is gone too
    }
  }
}
