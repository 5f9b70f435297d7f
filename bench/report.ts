/**
 * Turns measured loops into the benchmark's report: per profile, per-scenario medians over
 * rounds, ratios to that profile's baseline A paired by round (each round's loops ran back to
 * back, so a paired ratio cancels most of the machine's drift), and the Markdown tables.
 * Invariant: pure functions of their inputs (no I/O, no clock), so a results file can be
 * re-rendered from its raw numbers.
 */
import type { LinkSpec } from "./link-spec.ts";
import { type LoopSample, type LoopSummary, median, summarizeLoop } from "./metrics.ts";
import type { ProfileId } from "./profiles.ts";
import type { Scenario, ScenarioId } from "./scenarios.ts";

/** Everything measured for one scenario. */
export interface ScenarioRun {
  id: ScenarioId;
  label: string;
  description: string;
  /** "unavailable": failed in the warm-up loop; "failed": failed in a measured round. */
  status: "ok" | "unavailable" | "failed";
  /** Why it is unavailable/failed, else null. */
  error: string | null;
  /** Measured loops by round index (rounds it did not run in are absent). */
  loops: Map<number, LoopSample>;
}

/** Creates the empty run record of a scenario. */
export function newScenarioRun(scenario: Scenario): ScenarioRun {
  return {
    id: scenario.id,
    label: scenario.label,
    description: scenario.description,
    status: "ok",
    error: null,
    loops: new Map(),
  };
}

/** Ratios to A (scenario ÷ A), each the median over rounds of the same-round ratio. */
export interface RatiosToA {
  loopMs: number;
  turnMeanMs: number;
  turnP50Ms: number;
  ttftP50Ms: number;
  clientBytesPerTurn: number;
  upstreamBytesPerTurn: number;
}

/** The client link's traffic of a scenario (link profile), medians over rounds. */
export interface WireSummary {
  /** Client connections opened per loop (1 = one kept-alive connection or socket for the loop). */
  connectionsPerLoop: number;
  /** Client → server wire bytes per turn (headers and framing included). */
  upBytesPerTurn: number;
  /** Server → client wire bytes per turn. */
  downBytesPerTurn: number;
  /** Mean lateness of the proxy's deliveries against their schedule, ms (a check on the proxy). */
  meanLateMs: number;
  /** Share of deliveries more than 2 ms late (0–1). */
  lateOver2MsShare: number;
}

/** The report row of one scenario. */
export interface ScenarioReport {
  id: ScenarioId;
  label: string;
  description: string;
  status: ScenarioRun["status"];
  error: string | null;
  /** Measured loops (rounds). */
  loops: number;
  /** Medians over rounds of each per-loop summary number (null without loops). */
  median: LoopSummary | null;
  /** Median WebSocket connect time, ms (null for HTTP). */
  connectMs: number | null;
  /** Upstream requests per turn (median over rounds), e.g. 1.0, or more with warm-ups/retries. */
  upstreamRequestsPerTurn: number | null;
  /** Upstream transports seen, summed over rounds ("http", "ws", …). */
  upstreamTransports: Record<string, number>;
  /** Null for A itself or when A has no loop in a common round. */
  vsA: RatiosToA | null;
  /** The client link's traffic (link profile only), else null. */
  wire: WireSummary | null;
  /** Per-loop summaries by round, for the raw results file. */
  rounds: Array<{ round: number; summary: LoopSummary; sample: LoopSample }>;
}

const SUMMARY_KEYS = [
  "loopMs",
  "turnMeanMs",
  "turnP50Ms",
  "ttftMeanMs",
  "ttftP50Ms",
  "clientBytesPerTurn",
  "upstreamBytesPerTurn",
] as const satisfies ReadonlyArray<keyof LoopSummary>;

const RATIO_KEYS = [
  "loopMs",
  "turnMeanMs",
  "turnP50Ms",
  "ttftP50Ms",
  "clientBytesPerTurn",
  "upstreamBytesPerTurn",
] as const satisfies ReadonlyArray<keyof RatiosToA>;

function medianSummary(summaries: LoopSummary[]): LoopSummary | null {
  if (summaries.length === 0) return null;
  const out = {} as LoopSummary;
  for (const key of SUMMARY_KEYS) out[key] = median(summaries.map((s) => s[key]));
  return out;
}

function pairedRatios(run: ScenarioRun, baseline: ScenarioRun): RatiosToA | null {
  const pairs: Array<[LoopSummary, LoopSummary]> = [];
  for (const [round, sample] of run.loops) {
    const base = baseline.loops.get(round);
    if (base) pairs.push([summarizeLoop(sample), summarizeLoop(base)]);
  }
  if (pairs.length === 0) return null;
  const out = {} as RatiosToA;
  for (const key of RATIO_KEYS) out[key] = median(pairs.map(([s, b]) => s[key] / b[key]));
  return out;
}

function wireSummary(samples: LoopSample[]): WireSummary | null {
  const wired = samples.flatMap((s) =>
    s.wire ? [{ wire: s.wire, turns: Math.max(1, s.turns.length) }] : [],
  );
  if (wired.length === 0) return null;
  return {
    connectionsPerLoop: median(wired.map((w) => w.wire.connections)),
    upBytesPerTurn: median(wired.map((w) => w.wire.upBytes / w.turns)),
    downBytesPerTurn: median(wired.map((w) => w.wire.downBytes / w.turns)),
    meanLateMs: median(wired.map((w) => w.wire.lateMsSum / Math.max(1, w.wire.deliveries))),
    lateOver2MsShare: median(wired.map((w) => w.wire.lateOver2Ms / Math.max(1, w.wire.deliveries))),
  };
}

/** Builds the report rows of one profile, in the order of `runs`; ratios are to its run "A". */
export function buildReport(runs: ScenarioRun[]): ScenarioReport[] {
  const baseline = runs.find((r) => r.id === "A");
  return runs.map((run) => {
    const rounds = [...run.loops.entries()]
      .sort(([a], [b]) => a - b)
      .map(([round, sample]) => ({ round, summary: summarizeLoop(sample), sample }));
    const connects = rounds.flatMap((r) => (r.sample.connectMs === null ? [] : [r.sample.connectMs]));
    const transports: Record<string, number> = {};
    for (const { sample } of rounds) {
      for (const [name, count] of Object.entries(sample.upstream.transports)) {
        transports[name] = (transports[name] ?? 0) + count;
      }
    }
    return {
      id: run.id,
      label: run.label,
      description: run.description,
      status: run.status,
      error: run.error,
      loops: rounds.length,
      median: medianSummary(rounds.map((r) => r.summary)),
      connectMs: connects.length > 0 ? median(connects) : null,
      upstreamRequestsPerTurn:
        rounds.length > 0
          ? median(rounds.map((r) => r.sample.upstream.requests / Math.max(1, r.sample.turns.length)))
          : null,
      upstreamTransports: transports,
      vsA: baseline && run !== baseline ? pairedRatios(run, baseline) : null,
      wire: wireSummary(rounds.map((r) => r.sample)),
      rounds,
    };
  });
}

function ms(value: number): string {
  return value.toFixed(value >= 100 ? 0 : 1);
}

function bytes(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

function ratio(value: number | undefined): string {
  return value === undefined || !Number.isFinite(value) ? "—" : `${value.toFixed(2)}×`;
}

function via(transports: Record<string, number>): string {
  const names = Object.keys(transports).sort();
  return names.length > 0 ? names.join("+") : "—";
}

/**
 * The Markdown results table: medians over rounds, and each scenario's ratio to A.
 * Unavailable/failed scenarios get a row that says why.
 */
export function markdownTable(reports: ScenarioReport[]): string {
  const head = [
    "| Scenario | Loop (ms) | Loop vs A | Turn mean (ms) | Turn p50 (ms) | TTFT p50 (ms) | Client bytes/turn | Upstream bytes/turn | Upstream via |",
    "|---|--:|--:|--:|--:|--:|--:|--:|---|",
  ];
  const rows = reports.map((r) => {
    if (!r.median || r.status !== "ok") {
      const why = (r.error ?? "no measured loops").replace(/\|/g, "\\|").replace(/\s+/g, " ").slice(0, 160);
      return `| ${r.label} | ${r.status}: ${why} | | | | | | | |`;
    }
    const m = r.median;
    const vsA = r.id === "A" ? "1.00×" : ratio(r.vsA?.loopMs);
    return `| ${r.label} | ${ms(m.loopMs)} | ${vsA} | ${ms(m.turnMeanMs)} | ${ms(m.turnP50Ms)} | ${ms(m.ttftP50Ms)} | ${bytes(m.clientBytesPerTurn)} | ${bytes(m.upstreamBytesPerTurn)} | ${via(r.upstreamTransports)} |`;
  });
  const ratioHead = [
    "",
    "Ratios to A (scenario ÷ A within the same round, median over rounds; < 1 is faster / fewer bytes):",
    "",
    "| Scenario | Loop | Turn mean | Turn p50 | TTFT p50 | Client bytes/turn | Upstream bytes/turn |",
    "|---|--:|--:|--:|--:|--:|--:|",
  ];
  const ratioRows = reports
    .filter((r) => r.id !== "A" && r.vsA && r.status === "ok")
    .map((r) => {
      const v = r.vsA!;
      return `| ${r.id} | ${ratio(v.loopMs)} | ${ratio(v.turnMeanMs)} | ${ratio(v.turnP50Ms)} | ${ratio(v.ttftP50Ms)} | ${ratio(v.clientBytesPerTurn)} | ${ratio(v.upstreamBytesPerTurn)} |`;
    });
  const connects = reports.flatMap((r) =>
    r.connectMs === null || r.status !== "ok" ? [] : [`${r.id} ${ms(r.connectMs)} ms`],
  );
  const connectNote =
    connects.length > 0
      ? ["", `WebSocket handshake (median, included in loop time): ${connects.join(", ")}.`]
      : [];
  return [
    ...head,
    ...rows,
    ...connectNote,
    ...(ratioRows.length > 0 ? [...ratioHead, ...ratioRows] : []),
  ].join("\n");
}

/**
 * The client-link table of the link profile: what crossed the shaped link per turn (headers and
 * framing included) and how many connections each loop opened. Empty string without wire data.
 */
export function wireTable(reports: ScenarioReport[]): string {
  const rows = reports.flatMap((r) => {
    if (!r.wire || r.status !== "ok") return [];
    const w = r.wire;
    return [
      `| ${r.id} | ${w.connectionsPerLoop} | ${bytes(w.upBytesPerTurn)} | ${bytes(w.downBytesPerTurn)} | ${w.meanLateMs.toFixed(2)} | ${(w.lateOver2MsShare * 100).toFixed(1)}% |`,
    ];
  });
  if (rows.length === 0) return "";
  return [
    "Client link, per loop (medians over rounds; bytes are TCP payload as the proxy forwarded it, so HTTP headers, SSE/chunked and WebSocket framing count):",
    "",
    "| Scenario | Connections/loop | Uplink bytes/turn | Downlink bytes/turn | Proxy delivery lateness, mean (ms) | Deliveries > 2 ms late |",
    "|---|--:|--:|--:|--:|--:|",
    ...rows,
  ].join("\n");
}

/** The reports of one profile. */
export interface ProfileReport {
  id: ProfileId;
  /** Heading, with the link's shape for the link profile. */
  label: string;
  link: LinkSpec | null;
  scenarios: ScenarioReport[];
}

/**
 * One row per scenario, two columns per profile: median loop time and its paired ratio to the
 * same profile's A (so each profile is compared only with itself).
 */
export function summaryTable(profiles: ProfileReport[]): string {
  const ids = [...new Set(profiles.flatMap((p) => p.scenarios.map((s) => s.id)))];
  const head = `| Scenario | ${profiles.map((p) => `${p.id}: loop (ms) | ${p.id}: vs A`).join(" | ")} |`;
  const align = `|---|${profiles.map(() => "--:|--:").join("|")}|`;
  const rows = ids.map((id) => {
    const label = profiles.flatMap((p) => p.scenarios).find((s) => s.id === id)?.label ?? id;
    const cells = profiles.map((p) => {
      const r = p.scenarios.find((s) => s.id === id);
      if (!r?.median || r.status !== "ok") return `${r?.status ?? "not run"} | —`;
      return `${ms(r.median.loopMs)} | ${id === "A" ? "1.00×" : ratio(r.vsA?.loopMs)}`;
    });
    return `| ${label} | ${cells.join(" | ")} |`;
  });
  return [head, align, ...rows].join("\n");
}
