/**
 * Load mode: N agent sessions at once against a gateway over WebSocket (store:false, delta turns,
 * the WebSocket upstream with zero model time on loopback), each a short loop of the benchmark's
 * workload: Deltagate, and the floor relay (bench/floor/) in the same run, each through wrangler
 * dev's proxy and at the runtime's own port (gateways.ts), so Deltagate's throughput can be read
 * against what the runtime itself sustains. All sessions connect first, at most `CONNECT_CONCURRENCY` handshakes in flight (clients
 * arrive over time, not in one millisecond; a thousand simultaneous upgrades would measure a
 * reconnect storm instead, which is a different test); once every handshake has finished (or
 * failed) the sessions start their turns together, so connecting and the turn throughput are
 * measured apart, with all N sockets open during the turns.
 * Reports turns/s over the turn phase, turn latency p50/p99, failed sessions with their first
 * errors, the gateway's workerd CPU per turn (and its dev proxy's part) and workerd resident
 * memory (before, peak while running, after).
 * File descriptors: the benchmark's process holds N client sockets; the simulator's process (which
 * has the same limit) the upstream ends of up to N sockets plus those a previous step's sessions
 * still keep warm (Deltagate keeps an idle upstream socket 30 s after its client left); workerd
 * the other ends. A step whose need exceeds `ulimit -n` is refused with the number to raise it to,
 * rather than failing halfway.
 */
import { randomUUID } from "node:crypto";
import type { GatewayId, GatewayPath } from "./gateways.ts";
import { runAgentLoop } from "./loop.ts";
import { quantile } from "./metrics.ts";
import { openFileLimit, type StackCpu } from "./proc-stats.ts";
import { TIMING_OPT_IN_HEADER } from "./timing-hook.ts";
import { type WsTransport, wsTransport } from "./ws-transport.ts";

/** How often workerd's memory is sampled during a step, ms. */
const RSS_SAMPLE_MS = 250;
/** File descriptors per session in the fuller of this process and the simulator's (see above) + slack. */
const FDS_PER_SESSION = 2;
const FD_SLACK = 256;
/** Handshakes in flight at once during the connect phase. */
export const CONNECT_CONCURRENCY = 32;
/** Distinct error messages kept per step. */
const MAX_ERRORS = 5;

/** Where and how the load runs. */
export interface LoadOptions {
  gateway: GatewayId;
  path: GatewayPath;
  /** The gateway's `…/v1` base URL on that path. */
  baseUrl: string;
  apiKey: string;
  /** A model routed to the zero-model-time WebSocket upstream. */
  model: string;
  turnsPerSession: number;
  perMessageDeflate: boolean;
  askTiming: boolean;
  connectTimeoutMs: number;
  turnTimeoutMs: number;
  /** The gateway's cumulative CPU (proc-stats.ts `stackCpuMs`), null when unknown. */
  cpu(): StackCpu | null;
  /** The gateway's workerd resident memory, bytes, null when unknown. */
  rss(): number | null;
}

/** One load step's results. */
export interface LoadStep {
  /** The gateway and path it ran against (absent in results from before the floor: Deltagate, proxy). */
  gateway?: GatewayId;
  path?: GatewayPath;
  sessions: number;
  turnsPerSession: number;
  /** Null when the step ran; else why it was refused (e.g. the file descriptor limit). */
  refused: string | null;
  /** Sessions that completed every turn. */
  completedSessions: number;
  failedSessions: number;
  /** Up to 5 distinct error messages, with how many sessions hit each. */
  errors: Array<{ message: string; count: number }>;
  turnsCompleted: number;
  /** Ms until every handshake had finished. */
  connectPhaseMs: number;
  /** Ms from the common start of the turns to the last session's end. */
  turnPhaseMs: number;
  turnsPerSecond: number;
  latencyMs: { p50: number; p99: number; max: number };
  /** The gateway's workerd CPU over the whole step divided by completed turns, ms. */
  workerdCpuMsPerTurn: number | null;
  /** The part of it in wrangler dev's proxy (≈ 0 at the runtime's port), ms. */
  devProxyCpuMsPerTurn?: number | null;
  workerdRssBytes: { before: number | null; peak: number | null; after: number | null };
}

function emptyStep(options: LoadOptions, sessions: number, turns: number, refused: string): LoadStep {
  return {
    gateway: options.gateway,
    path: options.path,
    sessions,
    turnsPerSession: turns,
    refused,
    completedSessions: 0,
    failedSessions: 0,
    errors: [],
    turnsCompleted: 0,
    connectPhaseMs: 0,
    turnPhaseMs: 0,
    turnsPerSecond: 0,
    latencyMs: { p50: Number.NaN, p99: Number.NaN, max: Number.NaN },
    workerdCpuMsPerTurn: null,
    devProxyCpuMsPerTurn: null,
    workerdRssBytes: { before: null, peak: null, after: null },
  };
}

/** The file descriptor limit a step of `sessions` needs in this process. */
export function fdsNeeded(sessions: number): number {
  return sessions * FDS_PER_SESSION + FD_SLACK;
}

/** `fn(0…count-1)` with at most `limit` calls in flight; results in index order. */
async function mapLimited<T>(count: number, limit: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(count);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      out[i] = await fn(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
  return out;
}

/** Runs one step of `sessions` concurrent sessions. Never throws: failures are counted. */
export async function runLoadStep(sessions: number, options: LoadOptions): Promise<LoadStep> {
  const limit = openFileLimit();
  if (limit !== null && limit < fdsNeeded(sessions)) {
    return emptyStep(
      options,
      sessions,
      options.turnsPerSession,
      `ulimit -n is ${limit}; ${sessions} sessions need ≥ ${fdsNeeded(sessions)} (run \`ulimit -n ${fdsNeeded(sessions)}\` first)`,
    );
  }
  const errors = new Map<string, number>();
  const fail = (error: unknown): void => {
    const message = (error instanceof Error ? error.message : String(error)).replace(/resp_\w+/g, "resp_…");
    errors.set(message, (errors.get(message) ?? 0) + 1);
  };
  const rssBefore = options.rss();
  let rssPeak = rssBefore;
  const sampler = setInterval(() => {
    const rss = options.rss();
    if (rss !== null && (rssPeak === null || rss > rssPeak)) rssPeak = rss;
  }, RSS_SAMPLE_MS);
  const cpuBefore = options.cpu();
  const wsUrl = `${options.baseUrl.replace(/^http/, "ws")}/responses`;
  const runId = randomUUID().slice(0, 8);

  const started = performance.now();
  const transports: Array<WsTransport | null> = await mapLimited(sessions, CONNECT_CONCURRENCY, async (i) => {
    const nonce = `load-${runId}-${i}`;
    const transport = wsTransport({
      url: wsUrl,
      headers: {
        authorization: `Bearer ${options.apiKey}`,
        "session-id": nonce,
        ...(options.askTiming ? { [TIMING_OPT_IN_HEADER]: "true" } : {}),
      },
      perMessageDeflate: options.perMessageDeflate,
      model: options.model,
      store: false,
      promptCacheKey: nonce,
      dropEvery: 0,
      resume: "full",
      turnTimeoutMs: options.turnTimeoutMs,
      connectTimeoutMs: options.connectTimeoutMs,
    });
    try {
      await transport.open();
      return transport;
    } catch (error) {
      fail(error);
      await transport.close();
      return null;
    }
  });
  const connectPhaseMs = performance.now() - started;

  const turnStart = performance.now();
  const latencies: number[] = [];
  let completedSessions = 0;
  await Promise.all(
    transports.map(async (transport, i) => {
      if (!transport) return;
      try {
        const samples = await runAgentLoop(transport, {
          turns: options.turnsPerSession,
          nonce: `load-${runId}-${i}`,
        });
        for (const s of samples) latencies.push(s.latencyMs);
        completedSessions += 1;
      } catch (error) {
        fail(error);
      } finally {
        await transport.close();
      }
    }),
  );
  const turnPhaseMs = performance.now() - turnStart;
  clearInterval(sampler);
  const cpuAfter = options.cpu();
  const turnsCompleted = completedSessions * options.turnsPerSession;
  const rssAfter = options.rss();
  const perTurn = (before: number | null | undefined, after: number | null | undefined): number | null =>
    before != null && after != null && turnsCompleted > 0 ? (after - before) / turnsCompleted : null;
  return {
    gateway: options.gateway,
    path: options.path,
    sessions,
    turnsPerSession: options.turnsPerSession,
    refused: null,
    completedSessions,
    failedSessions: sessions - completedSessions,
    errors: [...errors.entries()]
      .sort(([, a], [, b]) => b - a)
      .slice(0, MAX_ERRORS)
      .map(([message, count]) => ({ message: message.slice(0, 300), count })),
    turnsCompleted,
    connectPhaseMs,
    turnPhaseMs,
    turnsPerSecond: turnPhaseMs > 0 ? (turnsCompleted * 1000) / turnPhaseMs : 0,
    latencyMs: {
      p50: quantile(latencies, 0.5),
      p99: quantile(latencies, 0.99),
      max: latencies.length > 0 ? Math.max(...latencies) : Number.NaN,
    },
    workerdCpuMsPerTurn: perTurn(cpuBefore?.workerdMs, cpuAfter?.workerdMs),
    devProxyCpuMsPerTurn: perTurn(cpuBefore?.proxyMs, cpuAfter?.proxyMs),
    workerdRssBytes: { before: rssBefore, peak: rssPeak, after: rssAfter },
  };
}
