/**
 * A transparent recording proxy for end-to-end tests: real clients (the demo, Codex) talk to it
 * instead of `wrangler dev`, and it forwards every byte unchanged while recording what crossed
 * the client ↔ Deltagate boundary — each plain HTTP request (method, path, status), each
 * WebSocket upgrade (path, request headers, status) and every WebSocket frame in both directions.
 * That is what lets a test assert what the client actually sent (e.g. only new items per turn)
 * and that it never fell back to `POST /v1/responses`, without instrumenting Deltagate.
 * Invariants: frames are forwarded in arrival order; an upgrade is answered only after Deltagate
 * answered it (so a 401/426 reaches the client as-is); a close without a close frame (1005/1006)
 * is passed on as a dropped connection, not as a clean close.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, request } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import WebSocket, { WebSocketServer } from "ws";

/** One plain HTTP request that went through the proxy. */
export interface ProxiedHttpRequest {
  method: string;
  /** Path with query string. */
  path: string;
  /** Deltagate's status, or null when it could not be reached. */
  status: number | null;
}

/** One WebSocket upgrade request. */
export interface ProxiedUpgrade {
  /** 1-based connection number (frames refer to it). */
  connection: number;
  path: string;
  headers: IncomingHttpHeaders;
  /** 101 when the socket was established, else Deltagate's refusal status (null: unreachable). */
  status: number | null;
}

/** One WebSocket frame. */
export interface ProxiedFrame {
  connection: number;
  /** `client`: client → Deltagate; `server`: Deltagate → client. */
  from: "client" | "server";
  /** The parsed JSON of a text frame (its raw text if it is not JSON; null for binary frames). */
  data: unknown;
}

/** A running proxy. */
export interface RecordingProxy {
  /** Origin clients use instead of Deltagate's, e.g. `http://127.0.0.1:PORT` (no `/v1`). */
  url: string;
  readonly http: ProxiedHttpRequest[];
  readonly upgrades: ProxiedUpgrade[];
  readonly frames: ProxiedFrame[];
  /** Stops listening and drops every open connection. */
  close(): Promise<void>;
  // --- dropConnection: added for e2e-reconnect.test.ts (cutting a live socket) ---
  /**
   * Cuts WebSocket connection `connection` (1-based, as in `upgrades`) abruptly, like a network
   * failure: both of its sockets are destroyed without a close frame, so the client sees 1006 and
   * Deltagate sees its peer vanish. Frames already in flight may or may not arrive first.
   * @throws {Error} when no such connection was established.
   */
  dropConnection(connection: number): void;
  // --- end dropConnection ---
}

/** Headers that belong to one hop (or to the WebSocket handshake the `ws` client redoes). */
const HOP_HEADERS = new Set([
  "host",
  "connection",
  "upgrade",
  "keep-alive",
  "transfer-encoding",
  "sec-websocket-key",
  "sec-websocket-version",
  "sec-websocket-extensions",
  "sec-websocket-accept",
  // The subprotocol offer is redone by the `ws` client from the offered list (below), so the
  // protocol Deltagate echoes is checked against it and echoed to the client in turn.
  "sec-websocket-protocol",
]);

/** The entries of a `Sec-WebSocket-Protocol` offer. */
function offeredProtocols(headers: IncomingHttpHeaders): string[] {
  return (headers["sec-websocket-protocol"] ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
}

/**
 * The headers passed on to Deltagate. As `host` becomes the target's, an `Origin` naming the
 * proxy itself (a page the proxy served) becomes the target's origin: a same-origin request
 * through the proxy stays same-origin, as behind a reverse proxy that keeps `Host`. Any other
 * `Origin` passes as it is.
 */
function forwardable(headers: IncomingHttpHeaders, target: URL): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_HEADERS.has(name)) out[name] = value;
  }
  if (headers.origin !== undefined && headers.origin === `http://${headers.host}`) out.origin = target.origin;
  return out;
}

function parseFrame(data: WebSocket.RawData, isBinary: boolean): unknown {
  if (isBinary) return null;
  const text = Buffer.isBuffer(data)
    ? data.toString("utf8")
    : Array.isArray(data)
      ? Buffer.concat(data).toString("utf8")
      : Buffer.from(data).toString("utf8");
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Closes `ws` the way its peer closed: a clean code is passed on, a dropped connection is dropped. */
function passClose(ws: WebSocket, code: number, reason: Buffer): void {
  if (ws.readyState === WebSocket.CLOSED || ws.readyState === WebSocket.CLOSING) return;
  const clean = code >= 1000 && code <= 4999 && code !== 1005 && code !== 1006 && code !== 1015;
  if (clean && ws.readyState === WebSocket.OPEN) ws.close(code, reason);
  else ws.terminate();
}

/**
 * Starts a proxy on a free port of 127.0.0.1 that forwards to `target`.
 * @param target Deltagate's origin, e.g. `http://127.0.0.1:8787` (no trailing slash).
 */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const targetUrl = new URL(target);
  const http: ProxiedHttpRequest[] = [];
  const upgrades: ProxiedUpgrade[] = [];
  const frames: ProxiedFrame[] = [];
  const sockets = new Set<WebSocket>();
  // dropConnection: both sockets of each established connection, by connection number.
  const pairs = new Map<number, readonly [WebSocket, WebSocket]>();
  // The protocol Deltagate echoed for each upgrade, echoed to the client (none: none).
  const echoed = new WeakMap<IncomingMessage, string>();
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: 0,
    handleProtocols: (_offered, req) => echoed.get(req) ?? false,
  });

  const server = createServer((req, res) => {
    const entry: ProxiedHttpRequest = { method: req.method ?? "GET", path: req.url ?? "/", status: null };
    http.push(entry);
    const upstream = request(
      {
        host: targetUrl.hostname,
        port: targetUrl.port,
        method: req.method,
        path: req.url,
        headers: { ...forwardable(req.headers, targetUrl), host: targetUrl.host },
      },
      (upstreamRes) => {
        entry.status = upstreamRes.statusCode ?? null;
        res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
        upstreamRes.pipe(res);
      },
    );
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    req.pipe(upstream);
  });

  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const entry: ProxiedUpgrade = {
      connection: upgrades.length + 1,
      path: req.url ?? "/",
      headers: req.headers,
      status: null,
    };
    upgrades.push(entry);
    const upstream = new WebSocket(`ws://${targetUrl.host}${entry.path}`, offeredProtocols(req.headers), {
      headers: forwardable(req.headers, targetUrl),
      perMessageDeflate: false,
      maxPayload: 0,
    });
    sockets.add(upstream);
    upstream.on("unexpected-response", (_req, res) => {
      entry.status = res.statusCode ?? null;
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const body = Buffer.concat(chunks);
        const headers = Object.entries(res.headers)
          .filter(([name]) => !HOP_HEADERS.has(name) && name !== "content-length")
          .map(([name, value]) => `${name}: ${Array.isArray(value) ? value.join(", ") : value}`);
        socket.end(
          [
            `HTTP/1.1 ${res.statusCode} ${res.statusMessage ?? ""}`,
            ...headers,
            `content-length: ${body.length}`,
            "connection: close",
            "",
            "",
          ].join("\r\n") + body.toString("latin1"),
          "latin1",
        );
      });
    });
    upstream.on("error", () => {
      if (entry.status === null) socket.destroy();
    });
    upstream.once("open", () => {
      entry.status = 101;
      if (upstream.protocol) echoed.set(req, upstream.protocol);
      wss.handleUpgrade(req, socket, head, (client) => {
        sockets.add(client);
        pairs.set(entry.connection, [client, upstream]); // dropConnection
        client.on("message", (data, isBinary) => {
          frames.push({ connection: entry.connection, from: "client", data: parseFrame(data, isBinary) });
          upstream.send(data, { binary: isBinary });
        });
        upstream.on("message", (data, isBinary) => {
          frames.push({ connection: entry.connection, from: "server", data: parseFrame(data, isBinary) });
          if (client.readyState === WebSocket.OPEN) client.send(data, { binary: isBinary });
        });
        client.on("close", (code, reason) => passClose(upstream, code, reason));
        upstream.on("close", (code, reason) => passClose(client, code, reason));
        client.on("error", () => client.terminate());
      });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    http,
    upgrades,
    frames,
    // --- dropConnection (see the interface) ---
    dropConnection: (connection) => {
      const pair = pairs.get(connection);
      if (!pair) throw new Error(`No established WebSocket connection #${connection}`);
      for (const ws of pair) ws.terminate();
    },
    // --- end dropConnection ---
    close: async () => {
      for (const ws of sockets) ws.terminate();
      wss.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
