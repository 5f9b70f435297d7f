/**
 * What one measured agent loop produces, and the order statistics the report is built from.
 * Invariant: every duration is in ms measured with `performance.now()` in the client process;
 * every size is in bytes of payload (HTTP request body / WebSocket text frame), never headers or
 * framing.
 */

/** One turn as the client saw it. */
export interface TurnSample {
  /** Ms from sending the request (HTTP `fetch` / WS frame) to receiving its terminal event. */
  latencyMs: number;
  /** Ms from sending to the first `response.output_text.delta` or `response.output_item.added`. */
  ttftMs: number;
  /** Bytes of the request payload the client sent for this turn. */
  clientBytes: number;
}

/** What the upstream (the simulator) received during one loop, from its request recorder. */
export interface UpstreamTraffic {
  /** Requests / WebSocket frames received (includes `generate:false` warm-ups, if any). */
  requests: number;
  /** Total payload bytes received. */
  bytes: number;
  /** Requests per recorder transport ("http", "ws", …): shows which upstream API really served. */
  transports: Record<string, number>;
}

/**
 * What crossed the client's shaped link during one loop (link profile only), counted by the
 * proxy: TCP payload bytes, so HTTP headers, chunked/SSE framing and WebSocket frame headers count.
 */
export interface WireTraffic {
  /** Client connections opened during the loop (keep-alive reuse shows as 1, or 0). */
  connections: number;
  /** Client → server bytes. */
  upBytes: number;
  /** Server → client bytes. */
  downBytes: number;
  /** Timer-driven deliveries the proxy made (both directions). */
  deliveries: number;
  /** Sum over deliveries of how late each was against its schedule, ms (event-loop lag). */
  lateMsSum: number;
  /** Deliveries more than 2 ms late. */
  lateOver2Ms: number;
}

/** One complete loop of one scenario. */
export interface LoopSample {
  /** Ms from the start of the loop (before connecting, for WebSocket) to the last terminal event. */
  loopMs: number;
  /** WebSocket scenarios: ms until the socket was open; null for HTTP. */
  connectMs: number | null;
  turns: TurnSample[];
  upstream: UpstreamTraffic;
  /** The client link's traffic (link profile), else null. */
  wire: WireTraffic | null;
}

/** Arithmetic mean (NaN for an empty list). */
export function mean(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  return values.reduce((sum, v) => sum + v, 0) / values.length;
}

/** Median: mean of the two middle values for an even count (NaN for an empty list). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Per-loop summary numbers, the unit the report takes medians over. */
export interface LoopSummary {
  loopMs: number;
  turnMeanMs: number;
  turnP50Ms: number;
  ttftMeanMs: number;
  ttftP50Ms: number;
  /** Mean bytes the client sent per turn. */
  clientBytesPerTurn: number;
  /** Mean bytes upstream received per turn (all upstream requests of the loop / turns). */
  upstreamBytesPerTurn: number;
}

/** Reduces one loop to its summary numbers. */
export function summarizeLoop(loop: LoopSample): LoopSummary {
  const latencies = loop.turns.map((t) => t.latencyMs);
  const ttfts = loop.turns.map((t) => t.ttftMs);
  return {
    loopMs: loop.loopMs,
    turnMeanMs: mean(latencies),
    turnP50Ms: median(latencies),
    ttftMeanMs: mean(ttfts),
    ttftP50Ms: median(ttfts),
    clientBytesPerTurn: mean(loop.turns.map((t) => t.clientBytes)),
    upstreamBytesPerTurn: loop.turns.length > 0 ? loop.upstream.bytes / loop.turns.length : Number.NaN,
  };
}
