/**
 * A `fetch` for the `openai` SDK built on `node:http` with one keep-alive agent per agent loop,
 * so every loop starts on a fresh connection (a new agent session opens one, and pays its setup on
 * a shaped link) and its turns then reuse it, exactly like the WebSocket loops, which open one
 * socket per loop. It also counts the bytes each connection really wrote and read (headers,
 * chunked framing and request bodies included), the client's uplink at the socket.
 * Owns the loop's agent: `close()` destroys its sockets.
 * Invariant: one request at a time per loop (`maxSockets: 1`), as an agent loop sends them.
 */
import { Agent, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import type { Socket } from "node:net";
import { Readable } from "node:stream";

/** What a loop's connections carried. */
export interface ClientWire {
  /** TCP connections opened. */
  connections: number;
  /** Bytes written by the client (request lines, headers, bodies; WebSocket: handshake and frames). */
  upBytes: number;
  /** Bytes read by the client. */
  downBytes: number;
}

/** A per-loop fetch and its counters. */
export interface LoopFetch {
  fetch: (input: string | URL, init?: RequestInit) => Promise<Response>;
  stats(): ClientWire;
  /** Destroys the loop's sockets. Idempotent. */
  close(): void;
}

function headerRecord(init: RequestInit | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  new Headers(init?.headers).forEach((value, key) => {
    out[key] = value;
  });
  return out;
}

function bodyBuffer(body: RequestInit["body"]): Buffer | null {
  if (body === undefined || body === null) return null;
  if (typeof body === "string") return Buffer.from(body, "utf8");
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  throw new Error(`loop-fetch cannot send a body of type ${Object.prototype.toString.call(body)}`);
}

function responseHeaders(raw: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [key, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(key, v);
  }
  return headers;
}

/** Creates the fetch of one loop (plain `http:` only: the benchmark runs on loopback). */
export function createLoopFetch(): LoopFetch {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const sockets = new Set<Socket>();

  const loopFetch = (input: string | URL, init?: RequestInit): Promise<Response> =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(String(input));
      if (url.protocol !== "http:") throw new Error(`loop-fetch speaks http: only, not ${url.protocol}`);
      const body = bodyBuffer(init?.body);
      const headers = headerRecord(init);
      if (body) headers["content-length"] = String(body.length);
      const signal = init?.signal ?? undefined;
      const req = httpRequest(
        url,
        { method: init?.method ?? "GET", headers, agent, ...(signal ? { signal } : {}) },
        (res) => {
          const status = res.statusCode ?? 0;
          const noBody = status === 204 || status === 304 || init?.method === "HEAD";
          const stream = noBody ? null : (Readable.toWeb(res) as unknown as ReadableStream<Uint8Array>);
          resolve(
            new Response(stream, {
              status,
              statusText: res.statusMessage ?? "",
              headers: responseHeaders(res.headers),
            }),
          );
        },
      );
      req.on("socket", (socket) => sockets.add(socket));
      req.on("error", reject);
      req.end(body ?? undefined);
    });

  return {
    fetch: loopFetch,
    stats(): ClientWire {
      let upBytes = 0;
      let downBytes = 0;
      for (const s of sockets) {
        upBytes += s.bytesWritten;
        downBytes += s.bytesRead;
      }
      return { connections: sockets.size, upBytes, downBytes };
    },
    close(): void {
      agent.destroy();
    },
  };
}
