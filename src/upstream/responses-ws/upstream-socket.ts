/**
 * One outbound WebSocket to a Responses WebSocket-mode upstream (`GET {base}/responses` +
 * Upgrade, https://developers.openai.com/api/docs/guides/websocket-mode), opened with a fetch-upgrade (`fetch()` needs an http(s) URL, then
 * `accept()`: https://developers.cloudflare.com/workers/examples/websockets/#write-a-websocket-client). Owns the socket's lifecycle, frame
 * parsing, and the connection-local chain it carries: which Deltagate response ids the upstream
 * can still continue on THIS socket, under which upstream id, and how many items that holds.
 * Invariants: once closed (by either side, an error, or an unparseable frame) a socket is never
 * used again and forgets its chain; the listener learns about the close exactly once.
 */
import { failureOf } from "../error-mapping.ts";
import { UpstreamError, type UpstreamEvent } from "../upstream.ts";
import { frameEvent } from "./frame-event.ts";

/** Why a socket stopped: the close code/reason, and whether Deltagate closed it itself. */
export interface SocketClose {
  code: number;
  reason: string;
  /** True when Deltagate closed it (idle, rotation, abort); false for upstream/network closes. */
  byUs: boolean;
  /** True when the upstream sent a frame that is not a JSON event (the socket is then closed). */
  invalidFrame: boolean;
}

/** A response the upstream holds on this socket, as Deltagate knows it. */
export interface ChainEntry {
  /** The upstream's own id of the response. */
  upstreamId: string;
  /** Items of the upstream's history after it: its context (as sent) plus its output items. */
  items: number;
}

/** Receives the frames of the turn currently running on the socket. */
export interface SocketListener {
  /** One parsed upstream event. */
  frame(event: UpstreamEvent): void;
  /** The socket is gone (called once, after which no frame arrives). */
  closed(close: SocketClose): void;
}

/** How to reach the upstream. */
export interface SocketTarget {
  /** Base URL including `/v1`, http(s), no trailing slash. */
  baseUrl: string;
  /** Bearer token, or null. */
  apiKey: string | null;
  /** `fetch` to use. */
  fetch: typeof fetch;
  /** Clock in ms. */
  now(): number;
}

/** An open (or closed) upstream socket. */
export class UpstreamSocket {
  /** When the socket was opened, ms since epoch (drives rotation before the 60-minute limit). */
  readonly openedAt: number;
  private readonly ws: WebSocket;
  private readonly capacity: number;
  /** Deltagate response id → what the upstream holds for it, oldest first, ≤ `capacity` entries. */
  private readonly chain = new Map<string, ChainEntry>();
  private listener: SocketListener | null = null;
  private readonly onGone: (socket: UpstreamSocket, close: SocketClose) => void;
  private gone: SocketClose | null = null;

  private constructor(
    ws: WebSocket,
    openedAt: number,
    capacity: number,
    onGone: (socket: UpstreamSocket, close: SocketClose) => void,
  ) {
    this.ws = ws;
    this.openedAt = openedAt;
    this.capacity = capacity;
    this.onGone = onGone;
    ws.addEventListener("message", (event) => this.receive(event.data));
    ws.addEventListener("close", (event) =>
      this.markGone({ code: event.code, reason: event.reason, byUs: false, invalidFrame: false }),
    );
    ws.addEventListener("error", () =>
      this.markGone({ code: 1006, reason: "socket error", byUs: false, invalidFrame: false }),
    );
  }

  /**
   * Opens a socket.
   * @param capacity how many recent responses the upstream keeps per connection (OpenAI: 1).
   * @param onGone called once when the socket closes for any reason.
   * @throws {UpstreamError} 502 `upstream_unavailable` when the upstream cannot be reached, or the
   *   mapped upstream status when it refuses the upgrade (401/403 → 502, 429, 5xx …).
   */
  static async connect(
    target: SocketTarget,
    capacity: number,
    onGone: (socket: UpstreamSocket, close: SocketClose) => void,
  ): Promise<UpstreamSocket> {
    const headers: Record<string, string> = { upgrade: "websocket" };
    if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
    let response: Response;
    try {
      response = await target.fetch(`${target.baseUrl}/responses`, { headers });
    } catch (cause) {
      throw new UpstreamError(
        502,
        "upstream_unavailable",
        `Could not reach the upstream model server (${String(cause)}).`,
      );
    }
    const ws = response.webSocket;
    if (response.status !== 101 || !ws) {
      if (!response.ok) throw await failureOf(response);
      await response.body?.cancel();
      throw new UpstreamError(
        502,
        "upstream_unavailable",
        "The upstream did not accept a WebSocket connection on /responses.",
      );
    }
    // Newer compatibility dates deliver binary frames as Blob by default; ask for ArrayBuffer
    // (https://developers.cloudflare.com/workers/configuration/compatibility-flags/).
    ws.binaryType = "arraybuffer";
    ws.accept();
    return new UpstreamSocket(ws, target.now(), capacity, onGone);
  }

  /** True until the socket closed. */
  get isOpen(): boolean {
    return this.gone === null;
  }

  /** Routes frames to `listener` (the running turn), or drops them when null. */
  listen(listener: SocketListener | null): void {
    this.listener = listener;
  }

  /**
   * Sends one JSON text frame (an object, or its JSON text).
   * @returns false when the socket turned out to be closed (it is then marked gone).
   */
  send(frame: Record<string, unknown> | string): boolean {
    if (this.gone) return false;
    try {
      this.ws.send(typeof frame === "string" ? frame : JSON.stringify(frame));
      return true;
    } catch {
      this.markGone({ code: 1006, reason: "send failed", byUs: false, invalidFrame: false });
      return false;
    }
  }

  /** Closes the socket (code 1000 unless told otherwise); idempotent. */
  close(reason: string, code = 1000): void {
    if (this.gone) return;
    try {
      this.ws.close(code, reason.slice(0, 120));
    } catch {
      // already closing
    }
    this.markGone({ code, reason, byUs: true, invalidFrame: false });
  }

  /** What the upstream holds on this socket for Deltagate response `id`, or null. */
  entryOf(id: string | null): ChainEntry | null {
    if (id === null || this.gone) return null;
    return this.chain.get(id) ?? null;
  }

  /** Records that the upstream holds Deltagate response `id` (the latest `capacity` are kept). */
  remember(id: string, entry: ChainEntry): void {
    this.chain.delete(id);
    this.chain.set(id, entry);
    while (this.chain.size > this.capacity) {
      const oldest = this.chain.keys().next();
      if (oldest.done) break;
      this.chain.delete(oldest.value);
    }
  }

  /** Forgets the chain: the upstream's connection cache can no longer be trusted. */
  forget(): void {
    this.chain.clear();
  }

  private receive(data: unknown): void {
    if (this.gone) return;
    const event = frameEvent(data);
    if (!event) {
      try {
        this.ws.close(1002, "invalid frame");
      } catch {
        // already closing
      }
      this.markGone({ code: 1002, reason: "invalid frame", byUs: true, invalidFrame: true });
      return;
    }
    this.listener?.frame(event);
  }

  private markGone(close: SocketClose): void {
    if (this.gone) return;
    this.gone = close;
    this.chain.clear();
    const listener = this.listener;
    this.listener = null;
    listener?.closed(close);
    this.onGone(this, close);
  }
}
