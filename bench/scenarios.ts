/**
 * The four benchmark scenarios and how one loop of each is run and attributed:
 * - A: no Deltagate: HTTP/SSE straight to the simulator, full history every turn (store:false);
 * - B: Deltagate WebSocket (delta turns), Responses HTTP upstream (Deltagate re-sends the context);
 * - C: Deltagate WebSocket, Responses WebSocket upstream (delta all the way);
 * - D: Deltagate HTTP (`previous_response_id` + delta), Responses HTTP upstream.
 * Also owns the Worker's routing table for the run (`benchUpstreams`), which sends the
 * `sim-ws*` models to the WebSocket upstream adapter and everything else to Responses HTTP.
 * The scenarios do not know the network profile: `BenchTargets` carries the URLs the client uses
 * (direct, or a link proxy's for the link profile, profiles.ts), and the runner fills in `wire`.
 * Invariant: loops run one at a time, so the simulator recorder's entries between a loop's start
 * and end are exactly that loop's upstream traffic (the recorder is cleared before each loop).
 */
import type { Recorder } from "../simulator/recorder.ts";
import { httpTransport } from "./http-transport.ts";
import { type LoopParams, runAgentLoop } from "./loop.ts";
import type { LoopSample, UpstreamTraffic } from "./metrics.ts";
import { HTTP_MODEL, WS_UPSTREAM_MODEL } from "./workload.ts";
import { wsTransport } from "./ws-transport.ts";

/** Scenario ids, in report order. */
export const SCENARIO_IDS = ["A", "B", "C", "D"] as const;
/** One of `SCENARIO_IDS`. */
export type ScenarioId = (typeof SCENARIO_IDS)[number];

/** Where the scenarios send their requests (the client's side of its hop). */
export interface BenchTargets {
  /** Deltagate's base URL including `/v1` (direct, or through the link proxy). */
  deltagateBaseUrl: string;
  deltagateApiKey: string;
  /** The simulator's base URL without `/v1` (A's target: direct, or through the link proxy). */
  simulatorUrl: string;
  /** The in-process simulator's request recorder. */
  recorder: Recorder;
}

/** A scenario: its label and how to run one loop. */
export interface Scenario {
  id: ScenarioId;
  /** Short label for the table. */
  label: string;
  /** One sentence on what goes over the wire. */
  description: string;
  /**
   * Runs one loop.
   * @throws {Error} when any turn fails (the caller marks the scenario unavailable).
   */
  run(targets: BenchTargets, params: LoopParams): Promise<LoopSample>;
}

/**
 * The `UPSTREAMS` routing table of the run (format: src/upstream/routes.ts).
 * @param simulatorUrl the simulator's base URL without `/v1`.
 */
export function benchUpstreams(simulatorUrl: string): string {
  const base = `${simulatorUrl}/v1`;
  return JSON.stringify([
    // idle_ms: close each loop's upstream socket soon after it ends, so sockets do not pile up.
    {
      model: "sim-ws*",
      api: "responses-ws",
      base_url: base,
      api_key_var: "UPSTREAM_API_KEY",
      idle_ms: 5_000,
    },
    { model: "*", api: "responses-http", base_url: base, api_key_var: "UPSTREAM_API_KEY" },
  ]);
}

function traffic(recorder: Recorder): UpstreamTraffic {
  const records = recorder.list();
  const transports: Record<string, number> = {};
  for (const record of records) transports[record.transport] = (transports[record.transport] ?? 0) + 1;
  return { requests: records.length, bytes: records.reduce((sum, r) => sum + r.bytes, 0), transports };
}

/** Runs an HTTP loop and attributes the recorder's traffic to it. */
async function httpLoop(
  targets: BenchTargets,
  params: LoopParams,
  transport: Parameters<typeof httpTransport>[0],
): Promise<LoopSample> {
  targets.recorder.clear();
  const started = performance.now();
  const turns = await runAgentLoop(httpTransport(transport), params);
  const loopMs = performance.now() - started;
  return { loopMs, connectMs: null, turns, upstream: traffic(targets.recorder), wire: null };
}

/** Runs a WebSocket loop (connect, turns, close) and attributes the recorder's traffic to it. */
async function wsLoop(targets: BenchTargets, params: LoopParams, model: string): Promise<LoopSample> {
  targets.recorder.clear();
  const started = performance.now();
  const transport = wsTransport({
    baseURL: targets.deltagateBaseUrl,
    apiKey: targets.deltagateApiKey,
    model,
  });
  try {
    await transport.opened();
    const connectMs = performance.now() - started;
    const turns = await runAgentLoop(transport, params);
    const loopMs = performance.now() - started;
    return { loopMs, connectMs, turns, upstream: traffic(targets.recorder), wire: null };
  } finally {
    await transport.close();
  }
}

/** The scenarios, in report order. */
export const SCENARIOS: readonly Scenario[] = [
  {
    id: "A",
    label: "A. HTTP direct, full history (no Deltagate)",
    description:
      "POST /v1/responses (SSE) straight to the simulator; store:false; every turn re-sends the whole history, with a per-loop prompt_cache_key.",
    run: (targets, params) =>
      httpLoop(targets, params, {
        baseURL: `${targets.simulatorUrl}/v1`,
        apiKey: "sim-key",
        model: HTTP_MODEL,
        style: "full-history",
        promptCacheKey: `bench-${params.nonce}`,
      }),
  },
  {
    id: "B",
    label: "B. Deltagate WS → Responses HTTP upstream",
    description:
      "ResponsesWS to Deltagate, store:false, previous_response_id + function_call_output only; Deltagate rebuilds the full context for a Responses HTTP/SSE upstream.",
    run: (targets, params) => wsLoop(targets, params, HTTP_MODEL),
  },
  {
    id: "C",
    label: "C. Deltagate WS → Responses WS upstream",
    description:
      "ResponsesWS to Deltagate as in B; the model is routed to the Responses WebSocket upstream adapter, which also sends only the delta on its warm socket.",
    run: (targets, params) => wsLoop(targets, params, WS_UPSTREAM_MODEL),
  },
  {
    id: "D",
    label: "D. Deltagate HTTP (previous_response_id) → Responses HTTP upstream",
    description:
      "POST /v1/responses (SSE) to Deltagate, store:true, previous_response_id + function_call_output only; same engine and upstream as B.",
    run: (targets, params) =>
      httpLoop(targets, params, {
        baseURL: targets.deltagateBaseUrl,
        apiKey: targets.deltagateApiKey,
        model: HTTP_MODEL,
        style: "delta",
      }),
  },
];
