/**
 * Markdown tables of a run, rendered from the results file alone (results.ts): the summary across
 * profiles, per profile the time table, the bytes/CPU table, Deltagate over the floor and the log
 * line's cost (floor-report.ts), the prompt cache (provider-report.ts), the shaped hops and the
 * per-stage timing, the load table and the targets of issues #8, #18, #26 and #27.
 * Invariant: pure functions of the results (no I/O, no clock).
 */
import type { CpuPerTurn, FloorReport } from "./floor-report.ts";
import type { LoadStep } from "./load.ts";
import { HOP_IDS } from "./metrics.ts";
import { cacheTable, PREFILL_NOTE } from "./provider-report.ts";
import type { Percentiles, ScenarioReport } from "./report.ts";
import type { ProfileResult, ResultsFile, TargetCheck } from "./results.ts";
import { SCENARIO_IDS } from "./scenarios.ts";

/** Ms for people: whole ms from 100 up, one decimal below. */
export function ms(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return "—";
  return Math.abs(value) >= 100 ? Math.round(value).toLocaleString("en-US") : value.toFixed(1);
}

/** A ratio, e.g. "0.45×". */
export function ratio(value: number | null | undefined): string {
  return value === null || value === undefined || !Number.isFinite(value) ? "—" : `${value.toFixed(2)}×`;
}

/** Bytes with thousands separators. */
export function bytes(value: number | null | undefined): string {
  return value === null || value === undefined || !Number.isFinite(value)
    ? "—"
    : Math.round(value).toLocaleString("en-US");
}

function pct(p: Percentiles | null): string {
  return p ? `${ms(p.p50)} / ${ms(p.p99)}` : "—";
}

function why(r: ScenarioReport): string {
  return `${r.status}: ${(r.error ?? "no measured loops").replace(/\|/g, "\\|").replace(/\s+/g, " ").slice(0, 160)}`;
}

function ok(r: ScenarioReport): boolean {
  return r.status === "ok" && r.loopMs !== null;
}

/** One row per scenario, a column per profile: median loop time and its ratio to that profile's A. */
export function summaryTable(profiles: ProfileResult[]): string {
  const ids = SCENARIO_IDS.filter((id) => profiles.some((p) => p.scenarios.some((s) => s.id === id)));
  const head = `| Scenario | ${profiles.map((p) => `${p.id}: loop (vs A)`).join(" | ")} |`;
  const align = `|---|${profiles.map(() => "--:").join("|")}|`;
  const rows = ids.map((id) => {
    const label = profiles.flatMap((p) => p.scenarios).find((s) => s.id === id)?.label ?? id;
    const cells = profiles.map((p) => {
      const r = p.scenarios.find((s) => s.id === id);
      if (!r) return "";
      if (!ok(r)) return r.status;
      return `${(r.loopMs! / 1000).toFixed(2)} s (${ratio(r.vsA)})`;
    });
    return `| ${label} | ${cells.join(" | ")} |`;
  });
  return [head, align, ...rows].join("\n");
}

/** Loop, ratios and latency percentiles of one profile. */
export function timeTable(profile: ProfileResult): string {
  const rows = profile.scenarios.map((r) => {
    if (!ok(r)) return `| ${r.label} | ${why(r)} | | | | | |`;
    const added = r.addedMs ? `${ms(r.addedMs.p50)} / ${ms(r.addedMs.p99)}` : "—";
    const versus = r.versus ? `${ratio(r.vsDirect)} of ${r.versus}` : "—";
    return `| ${r.label} | ${ms(r.loopMs)} | ${ratio(r.vsA)} | ${versus} | ${pct(r.turnMs)} | ${pct(r.ttftMs)} | ${added} |`;
  });
  return [
    "| Scenario | Loop (ms) | vs A | vs direct | Turn p50 / p99 (ms) | TTFT p50 / p99 (ms) | Added vs direct p50 / p99 (ms) |",
    "|---|--:|--:|--:|--:|--:|--:|",
    ...rows,
  ].join("\n");
}

/** Workerd CPU per turn, with wrangler dev's proxy's part in parentheses when it was measured. */
function cpuCell(r: ScenarioReport): string {
  const proxy = r.devProxyCpuMsPerTurn;
  return proxy == null || r.workerdCpuMsPerTurn === null
    ? ms(r.workerdCpuMsPerTurn)
    : `${ms(r.workerdCpuMsPerTurn)} (${ms(proxy)})`;
}

/** Bytes, connections, upstream traffic and workerd CPU of one profile. */
export function bytesTable(profile: ProfileResult): string {
  const rows = profile.scenarios.filter(ok).map((r) => {
    const via = Object.keys(r.upstreamTransports).sort().join("+") || "—";
    const rc =
      (r.reconnectsPerLoop ?? 0) > 0 || (r.fallbacksPerLoop ?? 0) > 0
        ? `${r.reconnectsPerLoop} / ${r.fallbacksPerLoop}`
        : "—";
    const deflate = r.deflate === null ? "—" : r.deflate ? "yes" : "no";
    return `| ${r.id} | ${bytes(r.uplinkPayloadBytesPerTurn)} | ${bytes(r.uplinkWireBytesPerTurn)} | ${ratio(r.uplinkVsA)} | ${deflate} | ${bytes(r.downlinkWireBytesPerTurn)} | ${r.connectionsPerLoop ?? "—"} | ${bytes(r.upstreamBytesPerTurn)} | ${via} | ${cpuCell(r)} | ${ms(r.wranglerCpuMsPerTurn)} | ${rc} |`;
  });
  return [
    "| Scenario | Uplink JSON (B/turn) | Uplink wire (B/turn) | Uplink wire vs A | permessage-deflate | Downlink wire (B/turn) | Client conns/loop | Upstream received (B/turn) | Upstream via | workerd CPU (ms/turn): all (dev proxy) | wrangler Node CPU (ms/turn) | Reconnects / fallbacks per loop |",
    "|---|--:|--:|--:|---|--:|--:|--:|---|--:|--:|--:|",
    ...rows,
  ].join("\n");
}

/** What crossed each shaped hop (link proxies), or "" when the profile shapes none. */
export function hopsTable(profile: ProfileResult): string {
  const rows = profile.scenarios.filter(ok).flatMap((r) =>
    HOP_IDS.flatMap((hop) => {
      const h = r.hops[hop];
      if (!h || (h.upBytesPerTurn === 0 && h.downBytesPerTurn === 0 && h.connectionsPerLoop === 0)) return [];
      return [
        `| ${r.id} | ${hop} | ${h.connectionsPerLoop} | ${bytes(h.upBytesPerTurn)} | ${bytes(h.downBytesPerTurn)} | ${h.meanLateMs.toFixed(2)} | ${(h.lateOver2MsShare * 100).toFixed(1)}% |`,
      ];
    }),
  );
  if (rows.length === 0) return "";
  return [
    "| Scenario | Hop | Conns/loop | Up (B/turn) | Down (B/turn) | Proxy lateness, mean (ms) | Deliveries > 2 ms late |",
    "|---|---|--:|--:|--:|--:|--:|",
    ...rows,
  ].join("\n");
}

/** Per-stage timing p50 / p99 reported by Deltagate, or "" when no turn carried any. */
export function stagesTable(profile: ProfileResult): string {
  const withStages = profile.scenarios.filter((r) => ok(r) && r.stages);
  if (withStages.length === 0) return "";
  const stages = [...new Set(withStages.flatMap((r) => Object.keys(r.stages ?? {})))];
  return [
    `| Scenario | ${stages.join(" | ")} |`,
    `|---|${stages.map(() => "--:").join("|")}|`,
    ...withStages.map((r) => `| ${r.id} | ${stages.map((s) => pct(r.stages?.[s] ?? null)).join(" | ")} |`),
  ].join("\n");
}

function mib(value: number | null): string {
  return value === null ? "—" : `${(value / 1024 / 1024).toFixed(0)}`;
}

/** A signed difference in ms, e.g. "+1.2" or "−0.3". */
function signed(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return "—";
  return value < 0 ? `−${ms(-value)}` : `+${ms(value)}`;
}

function pathLabel(path: string | undefined): string {
  return path === "runtime" ? "runtime port" : "dev proxy";
}

function cpuTriple(c: CpuPerTurn): string {
  return `${ms(c.runtime)} / ${ms(c.devProxy)} / ${ms(c.wrangler)}`;
}

/**
 * Deltagate over the floor relay (issue #27), one row per Deltagate scenario and its floor:
 * paired per turn, and CPU per turn by process; "" when the profile ran no such pair.
 */
export function floorTable(report: FloorReport | undefined): string {
  const pairs = report?.pairs ?? [];
  if (pairs.length === 0) return "";
  const rows = pairs.map((p) => {
    const l = p.over.latencyMs;
    return `| ${p.gateway} over ${p.floor} | ${pathLabel(p.path)} | ${p.store} | ${l ? `${signed(l.p50)} / ${signed(l.p99)}` : "—"} | ${l?.pairs ?? 0} | ${ms(p.gatewayCpu.runtime)} / ${ms(p.floorCpu.runtime)} / ${signed(p.over.cpuMsPerTurn.runtime)} | ${cpuTriple(p.gatewayCpu)} | ${cpuTriple(p.floorCpu)} | ${pct(p.gatewayOverDirect)} | ${pct(p.floorOverDirect)} |`;
  });
  return [
    "| Pair | Client reaches | store | Deltagate over the floor, paired per turn: p50 / p99 (ms) | Turn pairs | Runtime CPU (ms/turn): Deltagate / floor / over the floor | Deltagate CPU (ms/turn): runtime / dev proxy / wrangler Node | Floor CPU (ms/turn): runtime / dev proxy / wrangler Node | Deltagate over E p50 / p99 (ms) | Floor over E p50 / p99 (ms) |",
    "|---|---|---|--:|--:|--:|--:|--:|--:|--:|",
    ...rows,
  ].join("\n");
}

/**
 * The per-turn log line's cost (Deltagate minus its `TURN_LOG=0` twin, paired per turn and per
 * round): latency, and CPU per turn in the runtime and in what only wrangler dev runs; "" when
 * the profile did not run both.
 */
export function logLineTable(report: FloorReport | undefined): string {
  const costs = report?.logLine ?? [];
  if (costs.length === 0) return "";
  const rows = costs.map((c) => {
    const l = c.cost.latencyMs;
    const cpu = c.cost.cpuMsPerTurn;
    return `| ${c.on} − ${c.off} | ${pathLabel(c.path)} | ${l ? `${signed(l.p50)} / ${signed(l.p99)}` : "—"} | ${l?.pairs ?? 0} | ${signed(cpu.runtime)} | ${signed(cpu.devProxy)} | ${signed(cpu.wrangler)} |`;
  });
  return [
    "| With − without the log line | Client reaches | Turn latency p50 / p99 (ms) | Turn pairs | Runtime CPU (ms/turn) | wrangler dev's proxy CPU (ms/turn) | wrangler's Node CPU: console forwarding (ms/turn) |",
    "|---|---|--:|--:|--:|--:|--:|",
    ...rows,
  ].join("\n");
}

/** The load steps, each with the gateway and path it ran against. */
export function loadTable(steps: LoadStep[]): string {
  if (steps.length === 0) return "";
  const rows = steps.map((s) => {
    const where = `${s.gateway ?? "deltagate"} | ${pathLabel(s.path)}`;
    if (s.refused) return `| ${where} | ${s.sessions} | refused: ${s.refused} | | | | | | |`;
    const errors =
      s.failedSessions === 0
        ? "0"
        : `${s.failedSessions} (${s.errors
            .map((e) => `${e.count}× ${e.message}`)
            .join("; ")
            .replace(/\|/g, "\\|")
            .slice(0, 200)})`;
    const cpu =
      s.devProxyCpuMsPerTurn == null
        ? ms(s.workerdCpuMsPerTurn)
        : `${ms(s.workerdCpuMsPerTurn)} (${ms(s.devProxyCpuMsPerTurn)})`;
    return `| ${where} | ${s.sessions} × ${s.turnsPerSession} | ${(s.connectPhaseMs / 1000).toFixed(1)} | ${(s.turnPhaseMs / 1000).toFixed(1)} | ${s.turnsPerSecond.toFixed(0)} | ${ms(s.latencyMs.p50)} / ${ms(s.latencyMs.p99)} | ${errors} | ${cpu} | ${mib(s.workerdRssBytes.before)} / ${mib(s.workerdRssBytes.peak)} / ${mib(s.workerdRssBytes.after)} |`;
  });
  return [
    "| Gateway | Client reaches | Sessions × turns | Connect phase (s) | Turn phase (s) | Turns/s | Turn p50 / p99 (ms) | Failed sessions | workerd CPU (ms/turn): all (dev proxy) | workerd RSS before / peak / after (MiB) |",
    "|---|---|--:|--:|--:|--:|--:|---|--:|--:|",
    ...rows,
  ].join("\n");
}

/** Resending clients (issue #18): the loop, what reaches the upstream per turn, objects per loop. */
export function resendTable(profile: ProfileResult): string {
  const ids = ["A", "DG-sl-http", "DG-sl-ws", "E", "E-rc", "DG-cx-rc"];
  const shown = profile.scenarios.filter((r) => ids.includes(r.id) && ok(r));
  if (!shown.some((r) => r.id.startsWith("DG-"))) return "";
  const a = profile.scenarios.find((r) => r.id === "A" && ok(r));
  const rows = shown.map((r) => {
    const after = r.upstreamBytesAfterFirstTurn ?? null;
    const share =
      after !== null && a?.upstreamBytesAfterFirstTurn ? after / a.upstreamBytesAfterFirstTurn : null;
    const rc = r.afterReconnect
      ? `${bytes(r.afterReconnect.upstreamBytes)} (${((r.afterReconnect.upstreamBytes / r.afterReconnect.clientBytes) * 100).toFixed(1)}%)`
      : "—";
    const versus = r.versus ? `${ratio(r.vsDirect)} of ${r.versus}` : "—";
    return `| ${r.label} | ${ms(r.loopMs)} | ${ratio(r.vsA)} | ${versus} | ${bytes(after)} | ${share === null ? "—" : `${(share * 100).toFixed(1)}%`} | ${r.objectsPerLoop ?? "—"} | ${rc} |`;
  });
  return [
    "| Scenario | Loop (ms) | vs A | vs direct | Upstream B/turn from turn 2 | vs A's | Durable Objects per loop | Upstream B after a reconnect (% of the client's full resend) |",
    "|---|--:|--:|--:|--:|--:|--:|--:|",
    ...rows,
  ].join("\n");
}

/** The issue #8 targets as measured. */
export function targetsTable(targets: TargetCheck[]): string {
  return [
    "| Claim | Where | Measured | Target | Status |",
    "|---|---|---|---|---|",
    ...targets.map((t) => `| ${t.claim} | ${t.where} | ${t.measured} | ${t.target} | ${t.status} |`),
  ].join("\n");
}

/** The sentence above the floor table (latest.md and the benchmark page). */
export const FLOOR_INTRO =
  "Deltagate over the floor (issue #27): the same client and workload through the minimal relay of bench/floor/ (hibernation accept, one warm upstream socket, every frame parsed and re-stringified both ways, a SQLite write per store:true turn) on the same runtime, storage and rounds; the floor has no log line, Deltagate its default one (DG-nolog: without it). Runtime CPU is the gateway's workerd less wrangler dev's proxy; wrangler Node is the console forwarding only `wrangler dev` pays:";

/** The sentence above the log-line table. */
export const LOG_LINE_INTRO =
  "The per-turn log line (`TURN_LOG`), Deltagate minus its `TURN_LOG=0` twin in the same rounds: the runtime's part is the `console.log` itself, the proxy's and wrangler Node's only `wrangler dev` pays (workerd writes each line to its standard output, which wrangler's Node process reads and prints; the local stack attaches no devtools inspector, scripts/wrangler-dev.ts):";

/** The whole Markdown report of a run (latest.md and stdout). */
export function renderMarkdown(results: ResultsFile): string {
  const sections = results.profiles.flatMap((p) => {
    const hops = hopsTable(p);
    const stages = stagesTable(p);
    const floor = floorTable(p.floor);
    const logLine = logLineTable(p.floor);
    return [
      `## Profile ${p.label}`,
      "",
      `${p.assumptions} ${p.rounds} measured round(s).`,
      "",
      timeTable(p),
      "",
      bytesTable(p),
      ...(floor ? ["", FLOOR_INTRO, "", floor] : []),
      ...(logLine ? ["", LOG_LINE_INTRO, "", logLine] : []),
      ...(cacheTable(p) ? ["", `Prompt cache (issue #26). ${PREFILL_NOTE}`, "", cacheTable(p)] : []),
      ...(resendTable(p) ? ["", "Clients that resend everything (issue #18):", "", resendTable(p)] : []),
      ...(hops ? ["", "Shaped hops (TCP payload through each link proxy):", "", hops] : []),
      "",
      ...(stages
        ? ["Per-stage timing reported by Deltagate (p50 / p99, ms):", "", stages]
        : ["Per-stage timing: not reported by this Deltagate build (bench/README.md, “Per-stage timing”)."]),
      "",
    ];
  });
  const load = loadTable(results.load);
  return [
    "# Deltagate agent-loop benchmark",
    "",
    `Run ${results.date} (${results.durationSeconds} s), commit ${results.git?.commit ?? "?"}${results.git?.dirty ? " (dirty)" : ""}, ` +
      `${results.machine.cpuCount} CPU(s), 1-minute load ${results.machine.loadAverage1m.before.toFixed(1)} → ${results.machine.loadAverage1m.after.toFixed(1)}. ` +
      `Workload: ${results.workload.turns} turns, final context ${bytes(results.workload.finalContextBytes)} bytes (A's last request).`,
    "",
    "Loop time (median over rounds) and ratio to A of the same profile (< 1 is faster than A):",
    "",
    summaryTable(results.profiles),
    "",
    "Targets of issues #8, #18, #26 and #27 as measured in this run:",
    "",
    targetsTable(results.targets),
    "",
    ...(load
      ? [
          "## Load (zero profile: loopback, zero model time, WebSocket upstream; Deltagate and the floor relay)",
          "",
          load,
          "",
        ]
      : []),
    ...sections,
    "Scenarios:",
    "",
    ...(results.profiles[0]?.scenarios ?? []).map((r) => `- **${r.label}** — ${r.description}`),
    "",
    "Method: bench/README.md.",
    "",
  ].join("\n");
}
