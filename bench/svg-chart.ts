/**
 * The run's chart (bench/results/latest.svg), hand-written SVG with no dependency: one panel per
 * profile, one horizontal bar per scenario showing its loop time as a ratio to A of the same
 * profile (A = 1; shorter is faster), direct competitors in grey, the floor relay (bench/floor/) in
 * green and Deltagate in blue, each bar labelled with the ratio and the loop time.
 * Invariant: a pure function of the results; all text is XML-escaped.
 */
import type { ResultsFile } from "./results.ts";

const WIDTH = 820;
const LABEL_W = 300;
const BAR_MAX_W = 380;
const ROW_H = 20;
const PANEL_GAP = 18;
const TITLE_H = 22;

function esc(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Renders the chart; profiles without a measured A get a note instead of bars. */
export function renderChart(results: ResultsFile): string {
  const parts: string[] = [];
  let y = 34;
  const maxRatio = Math.max(
    1.2,
    ...results.profiles.flatMap((p) => p.scenarios.map((s) => (s.status === "ok" && s.vsA ? s.vsA : 0))),
  );
  const scale = BAR_MAX_W / maxRatio;
  for (const profile of results.profiles) {
    parts.push(
      `<text x="8" y="${y + 14}" font-weight="bold" font-size="12">${esc(clip(profile.label, 125))}</text>`,
    );
    y += TITLE_H;
    const top = y;
    for (const s of profile.scenarios) {
      const label = `<text x="${LABEL_W - 6}" y="${y + 14}" text-anchor="end" font-size="12">${esc(clip(s.label, 46))}</text>`;
      if (s.status !== "ok" || s.vsA === null || s.loopMs === null) {
        parts.push(
          label,
          `<text x="${LABEL_W + 4}" y="${y + 14}" font-size="11" fill="#b3261e">${esc(s.status === "ok" ? "no ratio to A" : s.status)}</text>`,
        );
      } else {
        const w = Math.max(1, s.vsA * scale);
        const fill = s.viaDeltagate ? "#1a73e8" : s.via?.gateway === "floor" ? "#34a853" : "#9aa0a6";
        parts.push(
          label,
          `<rect x="${LABEL_W}" y="${y + 3}" width="${w.toFixed(1)}" height="${ROW_H - 6}" fill="${fill}"/>`,
          `<text x="${(LABEL_W + w + 4).toFixed(1)}" y="${y + 14}" font-size="11">${s.vsA.toFixed(2)}× (${(s.loopMs / 1000).toFixed(2)} s)</text>`,
        );
      }
      y += ROW_H;
    }
    const oneX = LABEL_W + scale;
    parts.push(
      `<line x1="${oneX.toFixed(1)}" y1="${top}" x2="${oneX.toFixed(1)}" y2="${y}" stroke="#202124" stroke-dasharray="3,3"/>`,
    );
    y += PANEL_GAP;
  }
  const height = y + 24;
  const legend =
    `<rect x="8" y="${height - 18}" width="10" height="10" fill="#9aa0a6"/><text x="22" y="${height - 9}" font-size="11">direct (no Deltagate)</text>` +
    `<rect x="160" y="${height - 18}" width="10" height="10" fill="#1a73e8"/><text x="174" y="${height - 9}" font-size="11">through Deltagate</text>` +
    `<rect x="290" y="${height - 18}" width="10" height="10" fill="#34a853"/><text x="304" y="${height - 9}" font-size="11">floor relay</text>` +
    `<text x="390" y="${height - 9}" font-size="11">dashed line: A (= 1); shorter bars are faster</text>`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="8" y="20" font-size="15" font-weight="bold">${esc(`Agent loop time relative to A (stateless HTTP, full history) — ${results.workload.turns} turns, run ${results.date.slice(0, 10)}`)}</text>`,
    ...parts,
    legend,
    "</svg>",
    "",
  ].join("\n");
}
