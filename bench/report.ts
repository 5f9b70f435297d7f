/**
 * Turns measured loops into the benchmark's report: per profile and scenario, medians over rounds
 * of the per-loop numbers, percentiles over all turns, ratios paired by round (each round's loops
 * ran back to back, so a same-round ratio cancels most of the machine's drift) to A and to the
 * scenario's direct counterpart, and the per-turn latency a Deltagate scenario adds over that
 * counterpart (turn i of a round minus turn i of the counterpart in the same round).
 * Invariant: pure functions of their inputs (no I/O, no clock), so a results file can be
 * re-rendered from its raw numbers.
 */
import { responseOwner } from "../src/util/ids.ts";
import { type CacheSummary, cacheSummary } from "./cache-report.ts";
import type { Via } from "./gateways.ts";
import { HOP_IDS, type HopId, type LoopSample, mean, median, quantile, type TurnSample } from "./metrics.ts";
import type { Scenario, ScenarioId } from "./scenarios.ts";

/** Everything measured for one scenario in one profile. */
export interface ScenarioRun {
  scenario: Scenario;
  /** "unavailable": failed in the warm-up loop; "failed": failed in a measured round. */
  status: "ok" | "unavailable" | "failed";
  error: string | null;
  /** Measured loops by round index. */
  loops: Map<number, LoopSample>;
}

/** Creates the empty run record of a scenario. */
export function newScenarioRun(scenario: Scenario): ScenarioRun {
  return { scenario, status: "ok", error: null, loops: new Map() };
}

/** p50 and p99. */
export interface Percentiles {
  p50: number;
  p99: number;
}

/** A hop's traffic per loop (medians over rounds). */
export interface HopSummary {
  connectionsPerLoop: number;
  upBytesPerTurn: number;
  downBytesPerTurn: number;
  /** Mean lateness of the proxy's deliveries against their schedule, ms (a check on the proxy). */
  meanLateMs: number;
  /** Share of deliveries more than 2 ms late (0–1). */
  lateOver2MsShare: number;
}

/** The report of one scenario in one profile (plain data: it is written to latest.json). */
export interface ScenarioReport {
  id: ScenarioId;
  label: string;
  description: string;
  versus: ScenarioId | null;
  viaDeltagate: boolean;
  /** The gateway endpoint it went through (null: direct; absent in results from before the floor). */
  via?: Via | null;
  /** Its floor scenario (Deltagate's WebSocket loops; floor-report.ts), else null. */
  floor?: ScenarioId | null;
  status: ScenarioRun["status"];
  error: string | null;
  /** Measured loops. */
  loops: number;
  /** Median loop time, ms. */
  loopMs: number | null;
  /** Paired ratio of loop time to A (< 1 = faster than A). */
  vsA: number | null;
  /** Paired ratio of loop time to the direct counterpart (< 1 = faster than it). */
  vsDirect: number | null;
  /** Over all measured turns. */
  turnMs: Percentiles | null;
  ttftMs: Percentiles | null;
  /** Turn latency minus the counterpart's same turn in the same round, over all such pairs. */
  addedMs: (Percentiles & { pairs: number }) | null;
  /** JSON payload the client sent per turn (median over rounds of the loop mean). */
  uplinkPayloadBytesPerTurn: number | null;
  /** What the client's sockets wrote per turn (headers, framing, compression, reconnects). */
  uplinkWireBytesPerTurn: number | null;
  downlinkWireBytesPerTurn: number | null;
  /** Paired ratio of the client's wire uplink to A's. */
  uplinkVsA: number | null;
  /** Client connections opened per loop. */
  connectionsPerLoop: number | null;
  /** WebSocket scenarios: whether permessage-deflate was negotiated (in every loop); null for HTTP. */
  deflate: boolean | null;
  /** Median first WebSocket handshake, ms (null for HTTP). */
  connectMs: number | null;
  upstreamBytesPerTurn: number | null;
  upstreamRequestsPerTurn: number | null;
  /**
   * Mean payload bytes of the upstream's generating requests from the loop's second turn on
   * (median over rounds): what a turn costs upstream once the conversation exists (issue #18).
   */
  upstreamBytesAfterFirstTurn?: number | null;
  /**
   * Deltagate scenarios: session Durable Objects the loop's responses came from (their ids name
   * them), median over rounds; null for direct scenarios.
   */
  objectsPerLoop?: number | null;
  /**
   * Reconnect variants: the mean over turns right after a reconnect of the upstream request's
   * bytes and of the client's own request (the whole history when it resends it), median over
   * rounds; null when the loop had no such turn.
   */
  afterReconnect?: { upstreamBytes: number; clientBytes: number } | null;
  /** Upstream transports seen, summed over rounds ("http", "ws", "chat"). */
  upstreamTransports: Record<string, number>;
  /** Workerd CPU per turn while the loop ran (median over rounds), ms; direct scenarios show idle. */
  workerdCpuMsPerTurn: number | null;
  /**
   * The part of `workerdCpuMsPerTurn` spent in wrangler dev's proxy in front of the Worker (a local
   * hop production does not have: bench/proc-stats.ts), ms; null when it was not found.
   */
  devProxyCpuMsPerTurn?: number | null;
  /**
   * CPU per turn of the other processes of that `wrangler dev` (wrangler's Node processes, which
   * forward the Worker's console output), ms; null when not measured.
   */
  wranglerCpuMsPerTurn?: number | null;
  reconnectsPerLoop: number | null;
  fallbacksPerLoop: number | null;
  /** The payload bytes of the last turn (A: the final context), median over rounds. */
  lastTurnPayloadBytes: number | null;
  hops: Partial<Record<HopId, HopSummary>>;
  /**
   * The share of each turn's input tokens read from the prompt cache (issue #26: cache-report.ts),
   * null when its turns report no cache figures.
   */
  cache?: CacheSummary | null;
  /** Per-stage timing Deltagate reported (p50/p99 per stage over turns), null when none. */
  stages: Record<string, Percentiles & { turns: number }> | null;
  /** The raw loops by round. */
  rounds: Array<{ round: number; sample: LoopSample }>;
}

/** What pairing reads of a loop: its turns' latencies, in order. */
export interface TurnLatencies {
  readonly turns: readonly Pick<TurnSample, "latencyMs">[];
}

/**
 * Turn i of each round of `run` minus turn i of the same round of `other`, over every such pair
 * (both loops of a round ran seconds apart, so the difference cancels most of the machine's drift).
 */
export function pairedTurnDifferences(
  run: ReadonlyMap<number, TurnLatencies>,
  other: ReadonlyMap<number, TurnLatencies>,
): number[] {
  const out: number[] = [];
  for (const [round, sample] of run) {
    const o = other.get(round);
    if (!o) continue;
    sample.turns.forEach((t, i) => {
      const ot = o.turns[i];
      if (ot) out.push(t.latencyMs - ot.latencyMs);
    });
  }
  return out;
}

function ratioPaired(
  run: Map<number, LoopSample>,
  base: Map<number, LoopSample> | undefined,
  pick: (s: LoopSample) => number,
): number | null {
  if (!base) return null;
  const ratios: number[] = [];
  for (const [round, sample] of run) {
    const b = base.get(round);
    if (b && pick(b) > 0) ratios.push(pick(sample) / pick(b));
  }
  return ratios.length > 0 ? median(ratios) : null;
}

/** p50 and p99 of `values`, or null for none. */
export function percentiles(values: number[]): Percentiles | null {
  return values.length > 0 ? { p50: quantile(values, 0.5), p99: quantile(values, 0.99) } : null;
}

function medianOf(samples: LoopSample[], pick: (s: LoopSample) => number): number | null {
  return samples.length > 0 ? median(samples.map(pick)) : null;
}

/** Turns of a loop (at least 1, to divide by). */
export const turnsOf = (s: LoopSample): number => Math.max(1, s.turns.length);

function hopSummaries(samples: LoopSample[]): Partial<Record<HopId, HopSummary>> {
  const out: Partial<Record<HopId, HopSummary>> = {};
  for (const id of HOP_IDS) {
    const withHop = samples.flatMap((s) => {
      const hop = s.hops[id];
      return hop ? [{ hop, turns: turnsOf(s) }] : [];
    });
    if (withHop.length === 0) continue;
    out[id] = {
      connectionsPerLoop: median(withHop.map((w) => w.hop.connections)),
      upBytesPerTurn: median(withHop.map((w) => w.hop.upBytes / w.turns)),
      downBytesPerTurn: median(withHop.map((w) => w.hop.downBytes / w.turns)),
      meanLateMs: median(withHop.map((w) => w.hop.lateMsSum / Math.max(1, w.hop.deliveries))),
      lateOver2MsShare: median(withHop.map((w) => w.hop.lateOver2Ms / Math.max(1, w.hop.deliveries))),
    };
  }
  return out;
}

function stageSummaries(turns: TurnSample[]): ScenarioReport["stages"] {
  const byStage = new Map<string, number[]>();
  for (const turn of turns) {
    for (const [stage, ms] of Object.entries(turn.timing ?? {})) {
      const list = byStage.get(stage) ?? [];
      list.push(ms);
      byStage.set(stage, list);
    }
  }
  if (byStage.size === 0) return null;
  return Object.fromEntries(
    [...byStage.entries()].map(([stage, values]) => [
      stage,
      { p50: quantile(values, 0.5), p99: quantile(values, 0.99), turns: values.length },
    ]),
  );
}

/** Mean upstream bytes of a loop's requests after its first turn, or null without them. */
function afterFirstTurn(sample: LoopSample): number | null {
  const sizes = sample.upstream.perRequest ?? [];
  return sizes.length > 1 ? mean(sizes.slice(1)) : null;
}

/** Distinct session Durable Objects a loop's responses came from, or null when no id is known. */
function objectsOf(sample: LoopSample): number | null {
  const owners = sample.turns.flatMap((t) =>
    t.responseId ? [responseOwner(t.responseId) ?? t.responseId] : [],
  );
  return owners.length > 0 ? new Set(owners).size : null;
}

/** Upstream and client bytes of the turns right after a reconnect (one upstream request per turn). */
function reconnectBytes(sample: LoopSample): { upstreamBytes: number; clientBytes: number } | null {
  const sizes = sample.upstream.perRequest ?? [];
  if (sizes.length !== sample.turns.length) return null;
  const turns = sample.turns.flatMap((t, i) => (t.reconnected ? [{ t, up: sizes[i]! }] : []));
  if (turns.length === 0) return null;
  return {
    upstreamBytes: mean(turns.map((x) => x.up)),
    clientBytes: mean(turns.map((x) => x.t.clientBytes)),
  };
}

function medianPresent(values: Array<number | null>): number | null {
  const present = values.filter((v): v is number => v !== null);
  return present.length > 0 ? median(present) : null;
}

/** Builds the reports of one profile's runs, in the order given; ratios within the profile. */
export function buildReport(runs: ScenarioRun[]): ScenarioReport[] {
  const byId = new Map(runs.map((r) => [r.scenario.id, r]));
  const baseline = byId.get("A");
  return runs.map((run) => {
    const { scenario } = run;
    const rounds = [...run.loops.entries()]
      .sort(([a], [b]) => a - b)
      .map(([round, sample]) => ({ round, sample }));
    const samples = rounds.map((r) => r.sample);
    const turns = samples.flatMap((s) => s.turns);
    const counterpart = scenario.versus ? byId.get(scenario.versus) : undefined;
    const added = counterpart ? pairedTurnDifferences(run.loops, counterpart.loops) : [];
    const transports: Record<string, number> = {};
    for (const s of samples) {
      for (const [name, count] of Object.entries(s.upstream.transports)) {
        transports[name] = (transports[name] ?? 0) + count;
      }
    }
    const cpu = samples.flatMap((s) => (s.workerdCpuMs === null ? [] : [s.workerdCpuMs / turnsOf(s)]));
    const proxyCpu = samples.flatMap((s) => (s.devProxyCpuMs == null ? [] : [s.devProxyCpuMs / turnsOf(s)]));
    const wranglerCpu = samples.flatMap((s) =>
      s.wranglerCpuMs == null ? [] : [s.wranglerCpuMs / turnsOf(s)],
    );
    const connects = samples.flatMap((s) => (s.connectMs === null ? [] : [s.connectMs]));
    const isBaseline = run === baseline;
    return {
      id: scenario.id,
      label: scenario.label,
      description: scenario.description,
      versus: scenario.versus,
      viaDeltagate: scenario.viaDeltagate,
      via: scenario.via,
      floor: scenario.floor ?? null,
      status: run.status,
      error: run.error,
      loops: samples.length,
      loopMs: medianOf(samples, (s) => s.loopMs),
      vsA: isBaseline ? 1 : ratioPaired(run.loops, baseline?.loops, (s) => s.loopMs),
      vsDirect: ratioPaired(run.loops, counterpart?.loops, (s) => s.loopMs),
      turnMs: percentiles(turns.map((t) => t.latencyMs)),
      ttftMs: percentiles(turns.map((t) => t.ttftMs)),
      addedMs: added.length > 0 ? { ...percentiles(added)!, pairs: added.length } : null,
      uplinkPayloadBytesPerTurn: medianOf(samples, (s) => mean(s.turns.map((t) => t.clientBytes))),
      uplinkWireBytesPerTurn: medianOf(samples, (s) => s.client.upBytes / turnsOf(s)),
      downlinkWireBytesPerTurn: medianOf(samples, (s) => s.client.downBytes / turnsOf(s)),
      uplinkVsA: isBaseline ? 1 : ratioPaired(run.loops, baseline?.loops, (s) => s.client.upBytes),
      connectionsPerLoop: medianOf(samples, (s) => s.client.connections),
      deflate: samples.some((s) => s.deflate !== null) ? samples.every((s) => s.deflate === true) : null,
      connectMs: connects.length > 0 ? median(connects) : null,
      upstreamBytesPerTurn: medianOf(samples, (s) => s.upstream.bytes / turnsOf(s)),
      upstreamRequestsPerTurn: medianOf(samples, (s) => s.upstream.requests / turnsOf(s)),
      upstreamBytesAfterFirstTurn: medianPresent(samples.map(afterFirstTurn)),
      objectsPerLoop: scenario.viaDeltagate ? medianPresent(samples.map(objectsOf)) : null,
      afterReconnect: (() => {
        const found = samples.flatMap((s) => {
          const r = reconnectBytes(s);
          return r ? [r] : [];
        });
        return found.length > 0
          ? {
              upstreamBytes: median(found.map((f) => f.upstreamBytes)),
              clientBytes: median(found.map((f) => f.clientBytes)),
            }
          : null;
      })(),
      upstreamTransports: transports,
      workerdCpuMsPerTurn: cpu.length > 0 ? median(cpu) : null,
      devProxyCpuMsPerTurn: proxyCpu.length > 0 ? median(proxyCpu) : null,
      wranglerCpuMsPerTurn: wranglerCpu.length > 0 ? median(wranglerCpu) : null,
      reconnectsPerLoop: medianOf(samples, (s) => s.turns.filter((t) => t.reconnected).length),
      fallbacksPerLoop: medianOf(samples, (s) => s.turns.filter((t) => t.fallback).length),
      lastTurnPayloadBytes: medianOf(samples, (s) => s.turns.at(-1)?.clientBytes ?? 0),
      hops: hopSummaries(samples),
      cache: cacheSummary(samples),
      stages: stageSummaries(turns),
      rounds,
    };
  });
}
