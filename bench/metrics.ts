/**
 * What one measured agent loop produces, and the order statistics the report is built from.
 * Invariant: every duration is in ms measured with `performance.now()` in the client process
 * (workerd CPU: from /proc); payload sizes are JSON bytes (HTTP request body / WebSocket text
 * frame) and wire sizes are TCP payload bytes (headers, framing and compression included).
 */
import type { ClientWire } from "./loop-fetch.ts";
import type { StageTimings } from "./timing-hook.ts";

export type { ClientWire } from "./loop-fetch.ts";

/**
 * The prompt cache of one turn as the usage the client received reports it (issue #26): the
 * Response's `usage.input_tokens` and `input_tokens_details.cached_tokens` through Deltagate, the
 * provider's own usage for a direct client (Anthropic: `input_tokens` + `cache_creation_input_tokens`
 * + `cache_read_input_tokens`, of which the last is read; Gemini: `promptTokenCount`, of which
 * `cachedContentTokenCount`).
 */
export interface TurnCache {
  /** Every input token of the turn, cached or not. */
  inputTokens: number;
  /** The input tokens read from the prompt cache. */
  cachedTokens: number;
}

/** One turn as the client saw it. */
export interface TurnSample {
  /**
   * Ms from the moment the agent had its next request ready (before a reconnect, if the socket
   * had dropped) to the terminal event.
   */
  latencyMs: number;
  /** Ms from the same moment to the first `response.output_item.added` / output delta / chunk. */
  ttftMs: number;
  /** JSON payload bytes the client sent for this turn (both attempts after a fallback). */
  clientBytes: number;
  /** The turn had to open a new socket first (reconnect variants). */
  reconnected: boolean;
  /** The turn was refused with `previous_response_not_found` and re-sent with the full history. */
  fallback: boolean;
  /** Per-stage timing Deltagate reported for this turn (bench/timing-hook.ts), else null. */
  timing: StageTimings | null;
  /** The id of the turn's response (through Deltagate it names the session Durable Object). */
  responseId?: string;
  /** Input and cached tokens from the turn's usage, where the client reads them (issue #26). */
  cache?: TurnCache | null;
}

/** What the upstream (a simulator) received during one loop, from its request recorder. */
export interface UpstreamTraffic {
  /** Requests / WebSocket frames received (includes `generate:false` warm-ups, if any). */
  requests: number;
  /** Total payload bytes received. */
  bytes: number;
  /** Requests per recorder transport ("http", "ws", "chat"): shows which upstream API served. */
  transports: Record<string, number>;
  /** Payload bytes of each generating request (no `generate:false` warm-up), in order. */
  perRequest?: number[];
}

/** The shaped hops of a network profile. */
export const HOP_IDS = ["client-edge", "client-provider", "edge-provider"] as const;
/** One of `HOP_IDS`. */
export type HopId = (typeof HOP_IDS)[number];

/** What crossed one shaped hop during one loop, counted by its link proxy (TCP payload). */
export interface HopTraffic {
  connections: number;
  /** Towards the server (client → edge, client → provider, edge → provider). */
  upBytes: number;
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
  /** WebSocket scenarios: ms until the first socket was open; null for HTTP. */
  connectMs: number | null;
  turns: TurnSample[];
  /** The client's own sockets (every profile). */
  client: ClientWire;
  /** WebSocket loops: whether the server accepted permessage-deflate; null for HTTP. */
  deflate: boolean | null;
  /** The shaped hops' traffic (only the hops the profile shapes). */
  hops: Partial<Record<HopId, HopTraffic>>;
  upstream: UpstreamTraffic;
  /**
   * CPU time of the workerd processes of the `wrangler dev` the loop went through (direct loops:
   * Deltagate's, idle) during the loop, ms (null off Linux).
   */
  workerdCpuMs: number | null;
  /** The part of `workerdCpuMs` spent in wrangler dev's proxy (proc-stats.ts), ms; null if not found. */
  devProxyCpuMs: number | null;
  /**
   * CPU time of that `wrangler dev`'s other processes (wrangler's Node processes, which forward
   * the Worker's console output) during the loop, ms; null when not measured.
   */
  wranglerCpuMs?: number | null;
}

/** Arithmetic mean (NaN for an empty list). */
export function mean(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  return values.reduce((sum, v) => sum + v, 0) / values.length;
}

/**
 * The q-quantile (0 ≤ q ≤ 1) with linear interpolation between order statistics (Hyndman & Fan
 * type 7, the default of R and NumPy); NaN for an empty list.
 */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * Math.min(1, Math.max(0, q));
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/** Median (the 0.5 quantile). */
export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}
