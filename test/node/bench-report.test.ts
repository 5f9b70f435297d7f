/**
 * The benchmark's pure parts (bench/): the benchmark page's block rewrite, the per-stage timing parsers,
 * quantiles, the report's paired ratios and per-turn added latency, the chart, and the workload's
 * size. No processes, no timings measured.
 */
import { describe, expect, it } from "vitest";
import { buildFloorReport } from "../../bench/floor-report.ts";
import type { LoadStep } from "../../bench/load.ts";
import type { LoopSample, TurnSample } from "../../bench/metrics.ts";
import { quantile } from "../../bench/metrics.ts";
import { BLOCK_END, BLOCK_START, renderReadmeBlock, replaceBlock } from "../../bench/readme-block.ts";
import { buildReport, newScenarioRun } from "../../bench/report.ts";
import { checkTargets, type ProfileResult, type ResultsFile } from "../../bench/results.ts";
import { scenarioById } from "../../bench/scenarios.ts";
import { renderChart } from "../../bench/svg-chart.ts";
import { renderMarkdown } from "../../bench/tables.ts";
import { parseServerTiming, TIMING_EVENT_TYPE, timingFromEvent } from "../../bench/timing-hook.ts";
import {
  BENCH_TOOLS,
  INSTRUCTIONS,
  loopNonce,
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

/** A loop whose gateway's wrangler dev spent `cpu` (workerd in all, its proxy, wrangler's Node). */
function loopWithCpu(
  latencies: number[],
  cpu: { workerd: number; proxy: number; wrangler: number },
): LoopSample {
  return {
    ...loop(latencies, 100),
    workerdCpuMs: cpu.workerd,
    devProxyCpuMs: cpu.proxy,
    wranglerCpuMs: cpu.wrangler,
  };
}

function resultsOf(profiles: ProfileResult[], load: LoadStep[] = []): ResultsFile {
  return {
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
    load,
    targets: checkTargets(profiles, load),
  };
}

function loadStep(
  gateway: "deltagate" | "floor",
  path: "proxy" | "runtime",
  turnsPerSecond: number,
): LoadStep {
  return {
    gateway,
    path,
    sessions: 1000,
    turnsPerSession: 3,
    refused: null,
    completedSessions: 1000,
    failedSessions: 0,
    errors: [],
    turnsCompleted: 3000,
    connectPhaseMs: 1000,
    turnPhaseMs: 3_000_000 / turnsPerSecond,
    turnsPerSecond,
    latencyMs: { p50: 100, p99: 900, max: 1000 },
    workerdCpuMsPerTurn: 5,
    devProxyCpuMsPerTurn: path === "proxy" ? 1 : 0,
    workerdRssBytes: { before: 1, peak: 2, after: 1 },
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

describe("Deltagate over the floor (issue #27)", () => {
  it("pairs each Deltagate loop with its floor per round and turn, and the log line with its TURN_LOG=0 twin", () => {
    const runs = {
      e: newScenarioRun(scenarioById("E")),
      dg: newScenarioRun(scenarioById("DG-ws")),
      fl: newScenarioRun(scenarioById("FL-ws")),
      nolog: newScenarioRun(scenarioById("DG-nolog")),
      dgSt: newScenarioRun(scenarioById("DG-st@rt")),
      flSt: newScenarioRun(scenarioById("FL-st@rt")),
    };
    const dgCpu = { workerd: 30, proxy: 6, wrangler: 8 };
    const nologCpu = { workerd: 26, proxy: 4, wrangler: 2 };
    const flCpu = { workerd: 10, proxy: 4, wrangler: 2 };
    for (const round of [0, 1]) {
      runs.e.loops.set(round, loopWithCpu([5, 5], { workerd: 0, proxy: 0, wrangler: 0 }));
      runs.dg.loops.set(round, loopWithCpu(round === 0 ? [12, 25] : [13, 26], dgCpu));
      runs.fl.loops.set(round, loopWithCpu(round === 0 ? [10, 20] : [10, 21], flCpu));
      runs.nolog.loops.set(round, loopWithCpu([11, 22], nologCpu));
      runs.dgSt.loops.set(round, loopWithCpu([9, 9], { workerd: 12, proxy: 0, wrangler: 2 }));
      runs.flSt.loops.set(round, loopWithCpu([7, 7], { workerd: 4, proxy: 0, wrangler: 0 }));
    }
    // A floor scenario that failed has no pair: its Deltagate loop is not compared with nothing.
    const failedFloor = newScenarioRun(scenarioById("FL-st"));
    failedFloor.status = "failed";
    const dgSt = newScenarioRun(scenarioById("DG-st"));
    dgSt.loops.set(0, loopWithCpu([9, 9], dgCpu));
    const floor = buildFloorReport([...Object.values(runs), failedFloor, dgSt]);
    expect(floor.pairs.map((p) => [p.gateway, p.floor, p.path, p.store])).toEqual([
      ["DG-ws", "FL-ws", "proxy", false],
      ["DG-nolog", "FL-ws", "proxy", false],
      ["DG-st@rt", "FL-st@rt", "runtime", true],
    ]);
    const [ws, nolog, st] = floor.pairs;
    expect(ws?.over.latencyMs?.pairs).toBe(4); // differences 2, 5, 3, 5
    expect(ws?.over.latencyMs?.p50).toBeCloseTo(4);
    // Runtime CPU: workerd less the dev proxy, per turn (2 turns): Deltagate 12, floor 3.
    expect(ws?.gatewayCpu).toEqual({ runtime: 12, devProxy: 3, wrangler: 4 });
    expect(ws?.floorCpu).toEqual({ runtime: 3, devProxy: 2, wrangler: 1 });
    expect(ws?.over.cpuMsPerTurn).toEqual({ runtime: 9, devProxy: 1, wrangler: 3 });
    expect(ws?.gatewayOverDirect?.p50).toBeCloseTo(14); // 7, 20, 8, 21 over E's 5s
    expect(nolog?.over.latencyMs?.p50).toBeCloseTo(1); // 1, 2, 1, 1
    expect(st?.over.latencyMs).toMatchObject({ p50: 2, p99: 2, pairs: 4 });
    expect(floor.logLine).toHaveLength(1);
    expect(floor.logLine[0]).toMatchObject({ on: "DG-ws", off: "DG-nolog", path: "proxy" });
    expect(floor.logLine[0]?.cost.cpuMsPerTurn).toEqual({ runtime: 1, devProxy: 1, wrangler: 3 });
    expect(floor.logLine[0]?.cost.latencyMs?.p50).toBeCloseTo(2.5); // 1, 3, 2, 4
  });

  it("renders the floor and log-line tables, checks issue #27's bound and shows the load side by side", () => {
    const e = newScenarioRun(scenarioById("E"));
    const a = newScenarioRun(scenarioById("A"));
    const dg = newScenarioRun(scenarioById("DG-ws@rt"));
    const fl = newScenarioRun(scenarioById("FL-ws@rt"));
    const dgSt = newScenarioRun(scenarioById("DG-st@rt"));
    const flSt = newScenarioRun(scenarioById("FL-st@rt"));
    a.loops.set(0, loop([100, 100], 1000));
    e.loops.set(0, loopWithCpu([5, 5], { workerd: 0, proxy: 0, wrangler: 0 }));
    dg.loops.set(0, loopWithCpu([7, 7], { workerd: 8, proxy: 0, wrangler: 0 })); // +1 ms, +2 ms CPU/turn
    fl.loops.set(0, loopWithCpu([6, 6], { workerd: 4, proxy: 0, wrangler: 0 }));
    dgSt.loops.set(0, loopWithCpu([16, 16], { workerd: 20, proxy: 0, wrangler: 0 })); // +9 ms
    flSt.loops.set(0, loopWithCpu([7, 7], { workerd: 4, proxy: 0, wrangler: 0 }));
    const runs = [a, e, dg, fl, dgSt, flSt];
    const profiles: ProfileResult[] = [
      {
        id: "zero",
        label: "zero",
        assumptions: "…",
        rounds: 1,
        scenarios: buildReport(runs),
        floor: buildFloorReport(runs),
      },
    ];
    const results = resultsOf(profiles, [
      loadStep("deltagate", "runtime", 80),
      loadStep("floor", "runtime", 400),
    ]);
    const floorTargets = results.targets.filter((t) => t.claim.includes("over the floor"));
    expect(floorTargets.map((t) => [t.where, t.status])).toEqual([
      ["zero: DG-ws@rt vs FL-ws@rt", "met"],
      ["zero: DG-st@rt vs FL-st@rt", "not met"],
    ]);
    expect(floorTargets[0]?.measured).toBe("p50 +1.0 ms, p99 +1.0 ms; runtime CPU +2.0 ms/turn");
    const load = results.targets.find((t) => t.claim.startsWith("Load: Deltagate beside the floor"));
    expect(load?.status).toBe("info");
    expect(load?.measured).toContain("Deltagate 80 turns/s");
    expect(load?.measured).toContain("floor 400 turns/s");
    const md = renderMarkdown(results);
    expect(md).toContain("Deltagate over the floor (issue #27)");
    expect(md).toContain(
      "| DG-ws@rt over FL-ws@rt | runtime port | false | +1.0 / +1.0 | 2 | 4.0 / 2.0 / +2.0 |",
    );
    expect(md).toContain("| floor | runtime port | 1000 × 3 |");
    const block = renderReadmeBlock(results);
    expect(block).toContain("| DG-st@rt over FL-st@rt | runtime port | true | +9.0 / +9.0 |");
    expect(block).toContain("| deltagate | runtime port | 1000 × 3 |");
    expect(renderChart(results)).toContain("#34a853"); // the floor's bars
  });
});

describe("workload", () => {
  it("makes loop nonces without digits, so no nonce reads as a card number to the safety checks", () => {
    const nonces = Array.from({ length: 200 }, () => loopNonce("r1"));
    for (const nonce of nonces) expect(nonce).toMatch(/^r1-[a-p]{32}$/);
    expect(new Set(nonces).size).toBe(nonces.length);
  });

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
