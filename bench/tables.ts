/**
 * Markdown tables of a run, rendered from the results file alone (results.ts): the summary across
 * profiles, per profile the time table, the bytes/CPU table, the shaped hops and the per-stage
 * timing, the load table and the issue #8 targets.
 * Invariant: pure functions of the results (no I/O, no clock).
 */
import type { LoadStep } from "./load.ts";
import { HOP_IDS } from "./metrics.ts";
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
    return `| ${r.id} | ${bytes(r.uplinkPayloadBytesPerTurn)} | ${bytes(r.uplinkWireBytesPerTurn)} | ${ratio(r.uplinkVsA)} | ${deflate} | ${bytes(r.downlinkWireBytesPerTurn)} | ${r.connectionsPerLoop ?? "—"} | ${bytes(r.upstreamBytesPerTurn)} | ${via} | ${cpuCell(r)} | ${rc} |`;
  });
  return [
    "| Scenario | Uplink JSON (B/turn) | Uplink wire (B/turn) | Uplink wire vs A | permessage-deflate | Downlink wire (B/turn) | Client conns/loop | Upstream received (B/turn) | Upstream via | workerd CPU (ms/turn): all (dev proxy) | Reconnects / fallbacks per loop |",
    "|---|--:|--:|--:|---|--:|--:|--:|---|--:|--:|",
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

/** The load steps. */
export function loadTable(steps: LoadStep[]): string {
  if (steps.length === 0) return "";
  const rows = steps.map((s) => {
    if (s.refused) return `| ${s.sessions} | refused: ${s.refused} | | | | | | | |`;
    const errors =
      s.failedSessions === 0
        ? "0"
        : `${s.failedSessions} (${s.errors
            .map((e) => `${e.count}× ${e.message}`)
            .join("; ")
            .replace(/\|/g, "\\|")
            .slice(0, 200)})`;
    return `| ${s.sessions} × ${s.turnsPerSession} | ${(s.connectPhaseMs / 1000).toFixed(1)} | ${(s.turnPhaseMs / 1000).toFixed(1)} | ${s.turnsPerSecond.toFixed(0)} | ${ms(s.latencyMs.p50)} / ${ms(s.latencyMs.p99)} | ${errors} | ${ms(s.workerdCpuMsPerTurn)} | ${mib(s.workerdRssBytes.before)} / ${mib(s.workerdRssBytes.peak)} / ${mib(s.workerdRssBytes.after)} |`;
  });
  return [
    "| Sessions × turns | Connect phase (s) | Turn phase (s) | Turns/s | Turn p50 / p99 (ms) | Failed sessions | workerd CPU (ms/turn) | workerd RSS before / peak / after (MiB) |",
    "|--:|--:|--:|--:|--:|---|--:|--:|",
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

/** The whole Markdown report of a run (latest.md and stdout). */
export function renderMarkdown(results: ResultsFile): string {
  const sections = results.profiles.flatMap((p) => {
    const hops = hopsTable(p);
    const stages = stagesTable(p);
    return [
      `## Profile ${p.label}`,
      "",
      `${p.assumptions} ${p.rounds} measured round(s).`,
      "",
      timeTable(p),
      "",
      bytesTable(p),
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
    "Targets of issues #8 and #18 as measured in this run:",
    "",
    targetsTable(results.targets),
    "",
    ...(load ? ["## Load (zero profile: loopback, zero model time, WebSocket upstream)", "", load, ""] : []),
    ...sections,
    "Scenarios:",
    "",
    ...(results.profiles[0]?.scenarios ?? []).map((r) => `- **${r.label}** — ${r.description}`),
    "",
    "Method: bench/README.md.",
    "",
  ].join("\n");
}
