/**
 * The benchmark page's tables (docs/benchmarks.md, `BENCH_PAGE`), generated from a results file:
 * `renderReadmeBlock` builds the Markdown between the `<!-- bench:start -->` and
 * `<!-- bench:end -->` markers, `replaceBlock` swaps it into the page's text. `npm run bench:readme` (bench/update-readme.ts) runs both on
 * bench/results/latest.json; a full default `npm run bench` does it at the end of the run.
 * Invariant: pure functions; the text outside the markers is never changed, and a page without
 * both markers (in that order) is an error, not a silent append.
 */
import type { ResultsFile } from "./results.ts";
import {
  bytes,
  FLOOR_INTRO,
  floorTable,
  LOG_LINE_INTRO,
  loadTable,
  logLineTable,
  resendTable,
  summaryTable,
  targetsTable,
} from "./tables.ts";

/** The page that holds the block, from the repository's root (the README links to it). */
export const BENCH_PAGE = "docs/benchmarks.md";

/** The opening marker (on its own line). */
export const BLOCK_START = "<!-- bench:start -->";
/** The closing marker (on its own line). */
export const BLOCK_END = "<!-- bench:end -->";

/** The generated Markdown for the benchmark page (without the markers). */
export function renderReadmeBlock(results: ResultsFile): string {
  const rounds = results.profiles.map((p) => `${p.id} ${p.rounds}`).join(", ");
  const load = loadTable(results.load);
  // Clients that resend everything (issue #18), in the far profile when it ran them, else zero.
  const resendProfile =
    results.profiles.find((p) => p.id === "far2" && resendTable(p)) ??
    results.profiles.find((p) => resendTable(p));
  const resend = resendProfile ? resendTable(resendProfile) : "";
  // Deltagate over the floor (issue #27): in the first profile that ran the comparison (zero).
  const floorProfile = results.profiles.find((p) => floorTable(p.floor));
  const floor = floorProfile ? floorTable(floorProfile.floor) : "";
  const logLine = floorProfile ? logLineTable(floorProfile.floor) : "";
  return [
    `_Generated from \`bench/results/latest.json\` by \`npm run bench:readme\`; do not edit by hand. Run ${results.date.slice(0, 16).replace("T", " ")} UTC, ` +
      `commit ${results.git?.commit ?? "?"}${results.git?.dirty ? " (dirty)" : ""}, ${results.machine.cpuCount} CPU(s), ` +
      `1-minute load ${results.machine.loadAverage1m.before.toFixed(1)} → ${results.machine.loadAverage1m.after.toFixed(1)}, ` +
      `${results.durationSeconds} s._`,
    "",
    `Loop time of the ${results.workload.turns}-turn coding-agent workload (final context ${bytes(results.workload.finalContextBytes)} bytes), ` +
      `median over the interleaved rounds each profile ran (${rounds}), and its ratio to A in the same profile (< 1 is faster):`,
    "",
    summaryTable(results.profiles),
    "",
    "Targets of issues #8, #18, #26 and #27:",
    "",
    targetsTable(results.targets),
    ...(floor ? ["", `${floorProfile?.id} profile. ${FLOOR_INTRO}`, "", floor] : []),
    ...(logLine ? ["", LOG_LINE_INTRO, "", logLine] : []),
    ...(resend
      ? [
          "",
          `Clients that resend everything (issue #18), ${resendProfile?.id} profile: upstream bytes per turn from the second turn on, session Durable Objects per loop, and the upstream request right after a reconnect against the client's full resend:`,
          "",
          resend,
        ]
      : []),
    ...(load
      ? [
          "",
          "Load (one `wrangler dev` per gateway, loopback, zero model time; Deltagate and the floor relay back to back on each path):",
          "",
          load,
        ]
      : []),
    "",
    "![Loop time relative to A per profile](../bench/results/latest.svg)",
  ].join("\n");
}

/**
 * Replaces what is between the markers with `block`.
 * @throws {Error} when either marker is missing or they are out of order.
 */
export function replaceBlock(readme: string, block: string): string {
  const start = readme.indexOf(BLOCK_START);
  const end = readme.indexOf(BLOCK_END);
  if (start < 0 || end < 0 || end < start) {
    throw new Error(
      `${BENCH_PAGE} needs ${BLOCK_START} … ${BLOCK_END} (in that order) around the benchmark table`,
    );
  }
  return `${readme.slice(0, start + BLOCK_START.length)}\n${block.trim()}\n${readme.slice(end)}`;
}
