/**
 * The benchmark's pure parts (bench/): the benchmark page's block rewrite, the per-stage timing parsers,
 * quantiles, the report's paired ratios and per-turn added latency, the chart, and the workload's
 * size. No processes, no timings measured.
 */
import { describe, expect, it } from "vitest";
import type { LoopSample, TurnSample } from "../../bench/metrics.ts";
import { quantile } from "../../bench/metrics.ts";
import { BLOCK_END, BLOCK_START, renderReadmeBlock, replaceBlock } from "../../bench/readme-block.ts";
import { buildReport, newScenarioRun } from "../../bench/report.ts";
import { checkTargets, type ResultsFile } from "../../bench/results.ts";
import { scenarioById } from "../../bench/scenarios.ts";
import { renderChart } from "../../bench/svg-chart.ts";
import { renderMarkdown } from "../../bench/tables.ts";
import { parseServerTiming, TIMING_EVENT_TYPE, timingFromEvent } from "../../bench/timing-hook.ts";
import {
  BENCH_TOOLS,
  INSTRUCTIONS,
  toolOutput,
  toolOutputBytes,
  workloadFacts,
} from "../../bench/workload.ts";

function turn(latencyMs: number): TurnSample {
  return {
    latencyMs,
    ttftMs: latencyMs / 2,
    clientBytes: 100,
    reconnected: false,
    fallback: false,
    timing: null,
  };
}

function loop(latencies: number[], upBytes: number): LoopSample {
  return {
    loopMs: latencies.reduce((a, b) => a + b, 0),
    connectMs: null,
    turns: latencies.map(turn),
    client: { connections: 1, upBytes, downBytes: 10 },
    deflate: null,
    hops: {},
    upstream: { requests: latencies.length, bytes: 1000, transports: { ws: latencies.length } },
    workerdCpuMs: 20,
    devProxyCpuMs: 5,
  };
}

describe("the benchmark page's block", () => {
  it("replaces only what is between the markers", () => {
    const readme = `# Title\n\nintro\n${BLOCK_START}\nold table\n${BLOCK_END}\n\n## Next\n`;
    const out = replaceBlock(readme, "new table");
    expect(out).toBe(`# Title\n\nintro\n${BLOCK_START}\nnew table\n${BLOCK_END}\n\n## Next\n`);
    expect(replaceBlock(out, "new table")).toBe(out);
  });

  it("refuses a page without both markers in order", () => {
    expect(() => replaceBlock("no markers", "x")).toThrow(/bench:start/);
    expect(() => replaceBlock(`${BLOCK_END}\n${BLOCK_START}`, "x")).toThrow(/bench:start/);
  });
});

describe("per-stage timing", () => {
  it("reads Server-Timing durations and ignores malformed entries", () => {
    expect(parseServerTiming('edge;dur=0.4, upstream_connect;desc="ws";dur=12, bad;dur=x, cache')).toEqual({
      edge: 0.4,
      upstream_connect: 12,
    });
    expect(parseServerTiming(null)).toBeNull();
    expect(parseServerTiming("")).toBeNull();
  });

  it("reads a deltagate.timing event's stages and nothing else", () => {
    expect(
      timingFromEvent({
        type: TIMING_EVENT_TYPE,
        response_id: "resp_1",
        stages: { edge: 1, relay: 0.5, x: "no" },
      }),
    ).toEqual({ responseId: "resp_1", stages: { edge: 1, relay: 0.5 } });
    expect(timingFromEvent({ type: TIMING_EVENT_TYPE, edge_ms: 2, sequence_number: 9 })).toEqual({
      responseId: null,
      stages: { edge_ms: 2 },
    });
    expect(timingFromEvent({ type: "response.completed", stages: { edge: 1 } })).toBeNull();
    expect(timingFromEvent("not an event")).toBeNull();
  });
});

describe("report", () => {
  it("interpolates quantiles", () => {
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantile([5], 0.99)).toBe(5);
    expect(quantile([], 0.5)).toBeNaN();
  });

  it("pairs ratios by round and added latency by round and turn", () => {
    const a = newScenarioRun(scenarioById("A"));
    const e = newScenarioRun(scenarioById("E"));
    const dg = newScenarioRun(scenarioById("DG-ws"));
    a.loops.set(0, loop([100, 100], 1000));
    a.loops.set(1, loop([200, 200], 1000));
    e.loops.set(0, loop([10, 20], 100));
    e.loops.set(1, loop([10, 20], 100));
    dg.loops.set(0, loop([12, 25], 50));
    dg.loops.set(1, loop([13, 26], 50));
    const [ra, re, rdg] = buildReport([a, e, dg]);
    expect(ra?.vsA).toBe(1);
    expect(re?.vsA).toBeCloseTo((30 / 200 + 30 / 400) / 2);
    expect(rdg?.versus).toBe("E");
    expect(rdg?.vsDirect).toBeCloseTo((37 / 30 + 39 / 30) / 2);
    expect(rdg?.addedMs?.pairs).toBe(4);
    expect(rdg?.addedMs?.p50).toBeCloseTo(4); // pairs: 2, 5, 3, 6
    expect(rdg?.uplinkVsA).toBeCloseTo(0.05);
    expect(rdg?.workerdCpuMsPerTurn).toBe(10);
    expect(rdg?.devProxyCpuMsPerTurn).toBe(2.5);
    expect(re?.addedMs).toBeNull();
  });

  it("renders tables, targets, the chart and the page's block from a results object", () => {
    const a = newScenarioRun(scenarioById("A"));
    const dg = newScenarioRun(scenarioById("DG-ws"));
    a.loops.set(0, loop([100, 100], 1000));
    dg.loops.set(0, loop([12, 25], 50));
    const failed = newScenarioRun(scenarioById("DG-chat"));
    failed.status = "unavailable";
    failed.error = "upgrade refused: 400 | pipe";
    const profiles = [
      {
        id: "zero" as const,
        label: "zero <loopback>",
        assumptions: "…",
        rounds: 1,
        scenarios: buildReport([a, dg, failed]),
      },
    ];
    const results: ResultsFile = {
      date: "2026-12-01T00:00:00.000Z",
      durationSeconds: 1,
      git: { commit: "abc1234", dirty: false },
      machine: {
        node: "v22",
        platform: "linux",
        cpuCount: 2,
        cpuModel: "cpu",
        totalMemoryBytes: 1,
        loadAverage1m: { before: 0.1, after: 0.2 },
        storageFileSystem: "tmpfs",
        workerdProcesses: 2,
        openFileLimit: 4096,
      },
      versions: {},
      config: {},
      workload: { ...workloadFacts(2), finalContextBytes: 1234 },
      simulator: {},
      deltagate: { routes: [], runtime: "test" },
      profiles,
      load: [],
      targets: checkTargets(profiles, []),
    };
    const md = renderMarkdown(results);
    expect(md).toContain("| A: HTTP direct, full history |");
    expect(md).toContain("unavailable: upgrade refused: 400 \\| pipe");
    expect(results.targets.find((t) => t.where.startsWith("far2: DG-ws"))?.status).toBe("not measured");
    expect(results.targets.find((t) => t.where === "zero: DG-ws vs E")?.status).toBe("not measured");
    const svg = renderChart(results);
    expect(svg.startsWith("<svg ")).toBe(true);
    expect(svg.trimEnd().endsWith("</svg>")).toBe(true);
    expect(svg).toContain("zero &lt;loopback&gt;");
    expect(svg).not.toContain("<loopback>");
    const block = renderReadmeBlock(results);
    expect(block).toContain("| Scenario | zero: loop (vs A) |");
    expect(block).toContain("bench/results/latest.svg");
  });
});

describe("workload", () => {
  it("is shaped like a coding agent's: ~16 KB of instructions + tools, 2–8 KB outputs, ≥ 200 KB at 30 turns", () => {
    const facts = workloadFacts(30);
    const fixed = INSTRUCTIONS.length + JSON.stringify(BENCH_TOOLS).length;
    expect(fixed).toBeGreaterThan(15_000);
    expect(fixed).toBeLessThan(17_000);
    expect(facts.toolOutputBytes.min).toBe(2048);
    expect(facts.toolOutputBytes.max).toBe(8192);
    expect(fixed + facts.toolOutputTotalBytes).toBeGreaterThanOrEqual(200_000);
    expect(toolOutput(3, toolOutputBytes(3))).toHaveLength(toolOutputBytes(3));
    expect(toolOutput(3, 100)).toBe(toolOutput(3, 100));
  });
});
