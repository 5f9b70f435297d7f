/**
 * Issue #26's part of the report: the prompt-cache table of a profile (loop, TTFT and the share of
 * each turn's input tokens read from cache, per scenario that reports usage) and the targets
 * checked in the providers profile — from turn 2 on at least 90 % of each turn's input tokens read
 * from cache with automatic breakpoints (AN-dg), and loop time and TTFT side by side with and
 * without them and with the direct clients.
 * Invariant: pure functions of the results (no I/O, no clock); a figure that was not measured is
 * "—" / "not measured", never 0.
 */
import type { ScenarioReport } from "./report.ts";
import type { ProfileResult, TargetCheck } from "./results.ts";
import type { ScenarioId } from "./scenarios.ts";

/** The share of a turn's input tokens AN-dg must read from cache from turn 2 on (issue #26). */
export const CACHE_SHARE_TARGET = 0.9;

/**
 * What the simulator's prefill model assumes (simulator/timing.ts, simulator/anthropic/messages.ts,
 * simulator/gemini/generate.ts), stated with the table and the targets.
 */
export const PREFILL_NOTE =
  "The simulator's time to first event is a fixed overhead plus a fixed cost per uncached input token " +
  "(Anthropic: input_tokens + cache_creation_input_tokens, i.e. a cache write is prefilled like plain input; " +
  "Gemini: promptTokenCount − cachedContentTokenCount); cache reads cost no prefill time at all, and prefill is " +
  "linear in the uncached tokens (no attention cost growing with the context). Tokens are estimated as UTF-8 bytes / 4.";

const pct = (v: number | null | undefined): string =>
  v === null || v === undefined || !Number.isFinite(v) ? "—" : `${(v * 100).toFixed(1)}%`;

const ms = (v: number | null | undefined): string =>
  v === null || v === undefined || !Number.isFinite(v) ? "—" : `${Math.round(v).toLocaleString("en-US")}`;

const range = (r: { min: number; median: number } | null | undefined): string =>
  r ? `${pct(r.min)} / ${pct(r.median)}` : "—";

function ok(r: ScenarioReport | undefined): r is ScenarioReport {
  return r !== undefined && r.status === "ok" && r.loopMs !== null;
}

/** The per-turn shares as "t1 0% · t2 97% · …" (at most the first 12 and the last turn). */
function perTurnCell(r: ScenarioReport): string {
  const shares = r.cache?.perTurn ?? [];
  const shown =
    shares.length > 13
      ? [...shares.slice(0, 12).entries(), [shares.length - 1, shares.at(-1)] as const]
      : [...shares.entries()];
  return shown
    .map(
      ([i, share]) =>
        `t${i + 1} ${share === null || share === undefined ? "—" : `${Math.round(share * 100)}%`}`,
    )
    .join(" · ");
}

/** The prompt-cache table of one profile, or "" when no scenario of it reports cache figures. */
export function cacheTable(profile: ProfileResult): string {
  const shown = profile.scenarios.filter((r) => ok(r) && r.cache);
  if (shown.length === 0) return "";
  const rows = shown.map((r) => {
    const later = r.cache?.fromTurn2;
    const versus = r.versus ? `${r.vsDirect?.toFixed(2) ?? "—"}× of ${r.versus}` : "—";
    return `| ${r.label} | ${ms(r.loopMs)} | ${versus} | ${ms(r.ttftMs?.p50)} / ${ms(r.ttftMs?.p99)} | ${pct(r.cache?.perTurn[0])} | ${later ? `${pct(later.min)} / ${pct(later.median)}` : "—"} | ${pct(r.cache?.tokensFromTurn2?.share)} | ${range(r.cache?.boundFromTurn2)} | ${range(r.cache?.reuseFromTurn2)} | ${perTurnCell(r)} |`;
  });
  return [
    "| Scenario | Loop (ms) | vs direct | TTFT p50 / p99 (ms) | Cached, turn 1 | Cached from turn 2: lowest / median turn | Cached tokens from turn 2 | Most any cache could read: lowest / median turn | Previous prompt read back: lowest / median | Per turn (median over rounds) |",
    "|---|--:|--:|--:|--:|--:|--:|--:|--:|---|",
    ...rows,
  ].join("\n");
}

/**
 * The first turn (1-based, from 2) from which every later turn's share (median over rounds) is at
 * least `target`, or null when the last turn is below it.
 */
export function steadyFrom(perTurn: Array<number | null>, target: number): number | null {
  let from: number | null = null;
  for (let i = perTurn.length - 1; i >= 1; i--) {
    const share = perTurn[i];
    if (share === null || share === undefined || share < target) break;
    from = i + 1;
  }
  return from;
}

/** Issue #26's targets, read in the providers profile. */
export function providerTargets(profiles: ProfileResult[], out: TargetCheck[]): void {
  const profile = profiles.find((p) => p.id === "providers");
  const find = (id: ScenarioId): ScenarioReport | undefined => {
    const r = profile?.scenarios.find((s) => s.id === id);
    return ok(r) ? r : undefined;
  };
  const an = find("AN-dg");
  const later = an?.cache?.fromTurn2 ?? null;
  out.push({
    claim:
      "Anthropic with automatic cache breakpoints: from turn 2 on, the share of each turn's input tokens read from cache",
    where: "providers: AN-dg (Response usage input_tokens_details.cached_tokens)",
    measured: later
      ? `lowest turn ${pct(later.min)}, median ${pct(later.median)} over ${later.turns} turns; ${pct(an?.cache?.tokensFromTurn2?.share)} of all input tokens; ` +
        `every turn ≥ ${CACHE_SHARE_TARGET * 100}% from turn ${steadyFrom(an?.cache?.perTurn ?? [], CACHE_SHARE_TARGET) ?? "—"} on (median over rounds). ` +
        `The most any cache could read (the previous request's tokens / this one's): lowest turn ${range(an?.cache?.boundFromTurn2).replace(" / ", ", median ")}; ` +
        `the previous request's prompt read back: lowest turn ${range(an?.cache?.reuseFromTurn2).replace(" / ", ", median ")}`
      : "—",
    target: `≥ ${CACHE_SHARE_TARGET * 100}% every turn`,
    status: later === null ? "not measured" : later.min >= CACHE_SHARE_TARGET ? "met" : "not met",
  });
  const sideBySide = (ids: ScenarioId[]): string =>
    ids
      .flatMap((id) => {
        const r = find(id);
        return r ? [`${id} loop ${ms(r.loopMs)} ms, TTFT p50 ${ms(r.ttftMs?.p50)} ms`] : [];
      })
      .join("; ");
  for (const [claim, ids] of [
    [
      "Anthropic: loop time and TTFT with and without breakpoints and direct",
      ["AN-dg", "AN-nocache", "AN-direct"],
    ],
    ["Gemini: loop time and TTFT through Deltagate and direct", ["GM-dg", "GM-direct"]],
  ] as Array<[string, ScenarioId[]]>) {
    const measured = sideBySide(ids);
    out.push({
      claim,
      where: `providers: ${ids.join(", ")}`,
      measured: measured === "" ? "—" : `${measured} (prefill: fixed cost per uncached token, reads free)`,
      target: "reported side by side",
      status: measured === "" ? "not measured" : "info",
    });
  }
}
