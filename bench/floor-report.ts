/**
 * "Deltagate over the floor" (issue #27): what Deltagate costs per turn beyond the least any
 * relay on the same runtime costs, and what its per-turn log line costs, from the loops of one
 * profile's interleaved rounds.
 * - Floor pairs: each Deltagate WebSocket scenario against its floor (`Scenario.floor`: the same
 *   client through bench/floor/'s relay on the same path and with the same `store`): turn i of a
 *   round minus the floor's turn i of the same round (p50, p99 over all pairs), and CPU per turn
 *   of each side — the runtime's (the gateway's workerd processes less wrangler dev's proxy),
 *   the proxy's, and wrangler's Node processes' — with Deltagate's runtime CPU over the floor's as
 *   the median of the same-round differences.
 * - Log-line pairs: Deltagate against its `TURN_LOG=0` twin (`LOG_LINE_PAIRS`), the same way: the
 *   latency the line adds, the runtime CPU it costs (`console.log` inside the Worker), and what
 *   only `wrangler dev` pays for it (its proxy and its Node processes, which read each line from
 *   workerd's standard output and print it; production has neither).
 * Invariant: pure functions of the runs (no I/O, no clock); a pair is reported only when both
 * scenarios ran and measured loops in common rounds.
 */
import type { GatewayPath } from "./gateways.ts";
import { type LoopSample, median } from "./metrics.ts";
import { type Percentiles, pairedTurnDifferences, percentiles, type ScenarioRun, turnsOf } from "./report.ts";
import type { ScenarioId } from "./scenarios.ts";

/** Deltagate with its log line, and the same without it (`TURN_LOG=0`), per path. */
export const LOG_LINE_PAIRS: ReadonlyArray<{ on: ScenarioId; off: ScenarioId }> = [
  { on: "DG-ws", off: "DG-nolog" },
  { on: "DG-ws@rt", off: "DG-nolog@rt" },
];

/** CPU per turn of one side, ms (medians over rounds); null where not measured. */
export interface CpuPerTurn {
  /** The Worker's runtime: the gateway's workerd processes less wrangler dev's proxy. */
  runtime: number | null;
  /** wrangler dev's proxy (≈ idle at the runtime's port). */
  devProxy: number | null;
  /** wrangler's Node processes (console forwarding). */
  wrangler: number | null;
}

/** Paired differences, per turn (latency) or per round (CPU). */
export interface PairedDifference {
  /** Turn latency of the first minus the second's same turn in the same round, ms. */
  latencyMs: (Percentiles & { pairs: number }) | null;
  /** Median over rounds of the same-round difference of CPU per turn, ms. */
  cpuMsPerTurn: CpuPerTurn;
}

/** One Deltagate scenario over its floor. */
export interface FloorPair {
  gateway: ScenarioId;
  floor: ScenarioId;
  path: GatewayPath;
  store: boolean;
  /** Deltagate over the floor. */
  over: PairedDifference;
  /** Each side's own CPU per turn. */
  gatewayCpu: CpuPerTurn;
  floorCpu: CpuPerTurn;
  /** Each side's added latency over the direct loop (E), p50 / p99, for context. */
  gatewayOverDirect: Percentiles | null;
  floorOverDirect: Percentiles | null;
}

/** The per-turn log line's cost on one path. */
export interface LogLineCost {
  on: ScenarioId;
  off: ScenarioId;
  path: GatewayPath;
  /** With the line minus without it. */
  cost: PairedDifference;
}

/** The floor comparison of one profile (empty lists when its scenarios did not run). */
export interface FloorReport {
  pairs: FloorPair[];
  logLine: LogLineCost[];
}

const runtimeCpu = (s: LoopSample): number | null =>
  s.workerdCpuMs === null ? null : s.workerdCpuMs - (s.devProxyCpuMs ?? 0);

const CPU_PARTS: ReadonlyArray<[keyof CpuPerTurn, (s: LoopSample) => number | null | undefined]> = [
  ["runtime", runtimeCpu],
  ["devProxy", (s) => s.devProxyCpuMs],
  ["wrangler", (s) => s.wranglerCpuMs],
];

function perTurn(s: LoopSample, pick: (s: LoopSample) => number | null | undefined): number | null {
  const v = pick(s);
  return v == null ? null : v / turnsOf(s);
}

function medianOrNull(values: number[]): number | null {
  return values.length > 0 ? median(values) : null;
}

/** Each side's CPU per turn, median over its rounds. */
function cpuOf(run: ScenarioRun): CpuPerTurn {
  const samples = [...run.loops.values()];
  const out: CpuPerTurn = { runtime: null, devProxy: null, wrangler: null };
  for (const [part, pick] of CPU_PARTS) {
    out[part] = medianOrNull(samples.flatMap((s) => perTurn(s, pick) ?? []));
  }
  return out;
}

/** `a` minus `b`: per turn (latency) and per round (CPU per turn). */
function difference(a: ScenarioRun, b: ScenarioRun): PairedDifference {
  const latency = pairedTurnDifferences(a.loops, b.loops);
  const cpu: CpuPerTurn = { runtime: null, devProxy: null, wrangler: null };
  for (const [part, pick] of CPU_PARTS) {
    const diffs: number[] = [];
    for (const [round, sample] of a.loops) {
      const other = b.loops.get(round);
      const x = perTurn(sample, pick);
      const y = other ? perTurn(other, pick) : null;
      if (x !== null && y !== null) diffs.push(x - y);
    }
    cpu[part] = medianOrNull(diffs);
  }
  const p = percentiles(latency);
  return { latencyMs: p ? { ...p, pairs: latency.length } : null, cpuMsPerTurn: cpu };
}

function overDirect(run: ScenarioRun, byId: Map<ScenarioId, ScenarioRun>): Percentiles | null {
  const direct = run.scenario.versus ? byId.get(run.scenario.versus) : undefined;
  return direct ? percentiles(pairedTurnDifferences(run.loops, direct.loops)) : null;
}

const measured = (run: ScenarioRun | undefined): run is ScenarioRun =>
  run !== undefined && run.status === "ok" && run.loops.size > 0;

/** The floor comparison of one profile's runs. */
export function buildFloorReport(runs: ScenarioRun[]): FloorReport {
  const byId = new Map(runs.map((r) => [r.scenario.id, r]));
  const pairs: FloorPair[] = [];
  for (const run of runs) {
    const floorId = run.scenario.floor;
    const floor = floorId ? byId.get(floorId) : undefined;
    if (!floorId || !measured(run) || !measured(floor)) continue;
    const over = difference(run, floor);
    if (!over.latencyMs) continue; // no round in common
    pairs.push({
      gateway: run.scenario.id,
      floor: floorId,
      path: run.scenario.via?.path ?? "proxy",
      store: run.scenario.store ?? false,
      over,
      gatewayCpu: cpuOf(run),
      floorCpu: cpuOf(floor),
      gatewayOverDirect: overDirect(run, byId),
      floorOverDirect: overDirect(floor, byId),
    });
  }
  const logLine: LogLineCost[] = [];
  for (const { on, off } of LOG_LINE_PAIRS) {
    const a = byId.get(on);
    const b = byId.get(off);
    if (!measured(a) || !measured(b)) continue;
    const cost = difference(a, b);
    if (!cost.latencyMs) continue;
    logLine.push({ on, off, path: a.scenario.via?.path ?? "proxy", cost });
  }
  return { pairs, logLine };
}
