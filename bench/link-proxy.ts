/**
 * A link-shaping TCP proxy for the benchmark's "link" profile: it listens on 127.0.0.1, opens one
 * connection to the target (a port on 127.0.0.1) per client connection, and pipes bytes both ways
 * through `ShapedPipe`s, adding the link's one-way latency and bandwidth limit in each direction
 * (client → target is the uplink) and holding a new connection's first bytes for its setup round
 * trips (TCP, TLS). It is a byte pipe: HTTP keep-alive, SSE and WebSocket upgrades pass
 * unchanged, and half-closes are forwarded in order after the data before them.
 * Owns its listening socket and every proxied connection: `close()` ends them all.
 * Invariants: loopback only (listens on and connects to 127.0.0.1); bounded — at most
 * `maxConnections` (default 64) connections and `HIGH_WATER_BYTES` (plus one read) buffered per direction.
 * Not modelled: packet loss, jitter, TCP congestion control (slow start would make large uploads
 * on a fresh or idle connection slower still), and the CPU cost of TLS.
 */
import { createServer, connect as netConnect, type Socket } from "node:net";
import type { LinkSpec } from "./link-spec.ts";
import { newPipeCounters, type PipeCounters, ShapedPipe } from "./shaped-pipe.ts";

/** Simultaneous client connections the proxy accepts by default (a client loop uses one or two). */
const MAX_CONNECTIONS = 64;
/** Bytes buffered per direction before the sending side is paused. */
const HIGH_WATER_BYTES = 1 << 20;

/** Cumulative traffic through a proxy since it started (subtract two snapshots for one loop). */
export interface LinkProxyStats {
  /** Client connections accepted. */
  connections: number;
  /** Uplink (client → target) counters: bytes on the wire, including HTTP headers and WS framing. */
  up: PipeCounters;
  /** Downlink (target → client) counters. */
  down: PipeCounters;
}

/** A running proxy. */
export interface LinkProxy {
  /** `http://127.0.0.1:PORT`: use it in place of the target's origin. */
  origin: string;
  port: number;
  /** A copy of the cumulative counters. */
  stats(): LinkProxyStats;
  /** Stops listening and destroys every proxied connection. Idempotent. */
  close(): Promise<void>;
}

/** Options of `startLinkProxy`. */
export interface LinkProxyOptions {
  /** The port on 127.0.0.1 to forward to. */
  targetPort: number;
  spec: LinkSpec;
  /**
   * Simultaneous connections accepted (default 64). The edge → provider hop needs more: each
   * session's Durable Object keeps its own warm upstream socket until it idles out.
   */
  maxConnections?: number;
}

/**
 * Starts a proxy on a free port of 127.0.0.1 in front of `127.0.0.1:targetPort`.
 * @throws {Error} when it cannot listen.
 */
export async function startLinkProxy(options: LinkProxyOptions): Promise<LinkProxy> {
  const { spec, targetPort } = options;
  const oneWayMs = spec.rttMs / 2;
  const stats: LinkProxyStats = { connections: 0, up: newPipeCounters(), down: newPipeCounters() };
  const live = new Set<Socket>();

  const server = createServer({ allowHalfOpen: true, noDelay: true }, (client) => {
    const acceptedAt = performance.now();
    stats.connections += 1;
    // allowHalfOpen: a client's FIN is forwarded (delayed like its data), not answered for it.
    const target = netConnect({ host: "127.0.0.1", port: targetPort, allowHalfOpen: true, noDelay: true });
    live.add(client);
    live.add(target);
    const up = new ShapedPipe({
      source: client,
      dest: target,
      latencyMs: oneWayMs,
      bitsPerSecond: spec.upBitsPerSecond,
      // A real client sends its first request byte only after TCP (and TLS) setup round trips.
      openAt: acceptedAt + spec.handshakeRtts * spec.rttMs,
      highWaterBytes: HIGH_WATER_BYTES,
      counters: stats.up,
    });
    const down = new ShapedPipe({
      source: target,
      dest: client,
      latencyMs: oneWayMs,
      bitsPerSecond: spec.downBitsPerSecond,
      openAt: 0,
      highWaterBytes: HIGH_WATER_BYTES,
      counters: stats.down,
    });
    client.on("data", (chunk: Buffer) => up.push(chunk));
    target.on("data", (chunk: Buffer) => down.push(chunk));
    client.on("end", () => up.end());
    target.on("end", () => down.end());
    // An error on either side (reset, refused) is abortive: drop what is queued, close both.
    const kill = (): void => {
      up.abort();
      down.abort();
      client.destroy();
      target.destroy();
    };
    client.on("error", kill);
    target.on("error", kill);
    // A side that is gone can receive nothing more; what it sent still goes out, then a FIN.
    client.on("close", () => {
      live.delete(client);
      down.abort();
      up.end();
    });
    target.on("close", () => {
      live.delete(target);
      up.abort();
      down.end();
    });
  });
  server.maxConnections = options.maxConnections ?? MAX_CONNECTIONS;

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  if (!address || typeof address !== "object") throw new Error("the link proxy has no TCP address");
  const port = address.port;
  let closing: Promise<void> | null = null;

  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    stats: () => ({ connections: stats.connections, up: { ...stats.up }, down: { ...stats.down } }),
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of live) socket.destroy();
        live.clear();
      });
      return closing;
    },
  };
}
