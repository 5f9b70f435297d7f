/**
 * One client WebSocket of the benchmark (the `ws` package, as a Responses WebSocket-mode client
 * speaks it: JSON text frames out, one JSON event per frame back), with what the bench needs and
 * the `openai` SDK's `ResponsesWS` hides: the upgrade's extra headers, the permessage-deflate offer
 * (Codex makes one), an abrupt drop (a dead mobile link, not a close handshake), and the bytes the
 * client's TCP socket really wrote and read (handshake, frame headers, compression included).
 * Owns the socket; `close()` and `drop()` end it.
 */
import type { Socket } from "node:net";
import WebSocket from "ws";

/** A server event as the bench reads it (only `type` is relied on). */
export type ServerEvent = { type: string } & Record<string, unknown>;

/** How to open a socket. */
export interface WsClientOptions {
  /** `ws://host:port/v1/responses`. */
  url: string;
  headers: Record<string, string>;
  /** Offer permessage-deflate (RFC 7692); the server decides whether it is used. */
  perMessageDeflate: boolean;
  /** Give up on the handshake after this many ms. */
  connectTimeoutMs: number;
}

/** An open socket. */
export interface WsClient {
  /** Ms from creating the socket to `open`. */
  connectMs: number;
  /** True when the server accepted permessage-deflate. */
  deflate: boolean;
  /** Called for every event; set by the user of the socket. */
  onEvent: ((event: ServerEvent) => void) | null;
  /** Called once when the socket closes or errors. */
  onClose: ((why: string) => void) | null;
  readonly closed: boolean;
  send(text: string): void;
  /** Ends the TCP connection without a close frame (the server sees 1006). */
  drop(): void;
  /** Close handshake (1000), waiting at most 1 s. Never throws. */
  close(): Promise<void>;
  /** Bytes the TCP socket wrote and read so far (kept after it closed). */
  bytes(): { up: number; down: number };
}

const CLOSE_WAIT_MS = 1_000;

/**
 * Opens a socket and resolves once it is open.
 * @throws {Error} on a refused upgrade (with its status), a socket error, or the timeout.
 */
export function openWsClient(options: WsClientOptions): Promise<WsClient> {
  const started = performance.now();
  const ws = new WebSocket(options.url, {
    headers: options.headers,
    perMessageDeflate: options.perMessageDeflate,
    maxPayload: 0,
  });
  let tcp: Socket | null = null;
  ws.on("upgrade", (res) => {
    tcp = res.socket;
  });
  let closed = false;
  const client: WsClient = {
    connectMs: 0,
    deflate: false,
    onEvent: null,
    onClose: null,
    get closed() {
      return closed;
    },
    send(text) {
      ws.send(text);
    },
    drop() {
      ws.terminate();
    },
    close() {
      if (closed) return Promise.resolve();
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          ws.terminate();
          resolve();
        }, CLOSE_WAIT_MS);
        ws.once("close", () => {
          clearTimeout(timer);
          resolve();
        });
        ws.close(1000, "bench loop done");
      });
    },
    bytes() {
      const socket = tcp as Socket | null;
      return { up: socket?.bytesWritten ?? 0, down: socket?.bytesRead ?? 0 };
    },
  };
  const finish = (why: string): void => {
    if (closed) return;
    closed = true;
    client.onClose?.(why);
  };
  ws.on("message", (data, isBinary) => {
    if (isBinary) return;
    let event: unknown;
    try {
      event = JSON.parse(data.toString());
    } catch {
      return;
    }
    if (
      typeof event === "object" &&
      event !== null &&
      typeof (event as { type?: unknown }).type === "string"
    ) {
      client.onEvent?.(event as ServerEvent);
    }
  });
  ws.on("close", (code, reason) => finish(`closed ${code} ${reason.toString()}`));
  ws.on("error", (error) => finish(`error ${error.message}`));

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error(`no WebSocket open within ${options.connectTimeoutMs} ms`));
    }, options.connectTimeoutMs);
    ws.once("unexpected-response", (_req, res) => {
      clearTimeout(timer);
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        reject(
          new Error(`upgrade refused: ${res.statusCode} ${Buffer.concat(chunks).toString().slice(0, 200)}`),
        ),
      );
      ws.terminate();
    });
    ws.once("open", () => {
      clearTimeout(timer);
      client.connectMs = performance.now() - started;
      client.deflate = ws.extensions.includes("permessage-deflate");
      resolve(client);
    });
    ws.once("error", (error) => {
      clearTimeout(timer);
      reject(new Error(`WebSocket error: ${error.message}`));
    });
  });
}
