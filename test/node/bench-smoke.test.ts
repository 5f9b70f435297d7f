/**
 * `npm run bench` works end to end in a tiny configuration: 2 turns, 1 round, A and DG-ws on
 * loopback (the stack really starts: wrangler dev and the simulators), a 5-session load step. It
 * asserts the shape of the results and that every output file is written — never a timing.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ResultsFile } from "../../bench/results.ts";
import { REPO_ROOT } from "../../scripts/local-stack.ts";
import { runProcess } from "../support/e2e-process.ts";

const resultsDir = mkdtempSync(join(tmpdir(), "deltagate-bench-"));

afterAll(() => rmSync(resultsDir, { recursive: true, force: true }));

describe("npm run bench (tiny configuration)", () => {
  it("measures the chosen scenarios and the load step and writes latest.{json,md,svg}", async () => {
    const readmeBefore = readFileSync(join(REPO_ROOT, "docs", "benchmarks.md"), "utf8");
    const env: NodeJS.ProcessEnv = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith("BENCH_")),
    );
    Object.assign(env, {
      BENCH_TURNS: "2",
      BENCH_WARMUP_TURNS: "2",
      BENCH_ROUNDS: "1",
      BENCH_PROFILES: "zero",
      BENCH_SCENARIOS: "A,DG-ws,DG-sl-http,DG-cx-rc",
      BENCH_RECONNECT_EVERY: "1",
      BENCH_LOAD_SESSIONS: "5",
      BENCH_LOAD_TURNS: "2",
      BENCH_RESULTS_DIR: resultsDir,
      BENCH_README: "0",
    });
    const run = await runProcess(process.execPath, [join(REPO_ROOT, "bench/run.ts")], {
      cwd: REPO_ROOT,
      env,
      timeoutMs: 170_000,
    });
    const diagnostics = `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`;
    expect(run.timedOut, diagnostics).toBe(false);
    expect(run.code, diagnostics).toBe(0);

    const results = JSON.parse(readFileSync(join(resultsDir, "latest.json"), "utf8")) as ResultsFile;
    expect(results.profiles.map((p) => p.id)).toEqual(["zero"]);
    const [profile] = results.profiles;
    expect(profile?.rounds).toBe(1);
    expect(profile?.scenarios.map((s) => [s.id, s.status, s.loops])).toEqual([
      ["A", "ok", 1],
      ["DG-ws", "ok", 1],
      ["DG-sl-http", "ok", 1],
      ["DG-cx-rc", "ok", 1],
    ]);
    // Issue #18: the stateless client reaches one object, whose upstream requests after the first
    // turn carry only the new items; the Codex-like client's resend after its reconnect too.
    const [, , stateless, codexLike] = profile?.scenarios ?? [];
    const aAfterFirst = profile?.scenarios[0]?.upstreamBytesAfterFirstTurn ?? 0;
    expect(stateless?.objectsPerLoop).toBe(1);
    expect(stateless?.upstreamBytesAfterFirstTurn).toBeLessThan(aAfterFirst * 0.5);
    expect(codexLike?.afterReconnect?.upstreamBytes).toBeLessThan(
      (codexLike?.afterReconnect?.clientBytes ?? 0) * 0.5,
    );
    expect(codexLike?.rounds[0]?.sample.turns.map((t) => t.reconnected)).toEqual([false, true]);
    for (const scenario of (profile?.scenarios ?? []).slice(0, 2)) {
      const turns = scenario.rounds[0]?.sample.turns ?? [];
      expect(turns).toHaveLength(2);
      for (const t of turns) {
        expect(t.latencyMs).toBeGreaterThan(0);
        expect(t.ttftMs).toBeGreaterThan(0);
        expect(t.clientBytes).toBeGreaterThan(0);
        expect(t.reconnected).toBe(false);
      }
      expect(scenario.uplinkWireBytesPerTurn).toBeGreaterThan(0);
      expect(scenario.connectionsPerLoop).toBe(1);
    }
    const [a, dg] = profile?.scenarios ?? [];
    expect(a?.vsA).toBe(1);
    expect(a?.upstreamTransports).toEqual({ http: 2 });
    expect(dg?.versus).toBe("E");
    expect(dg?.viaDeltagate).toBe(true);
    expect(Object.keys(dg?.upstreamTransports ?? {})).toEqual(["ws"]);
    expect(dg?.vsA).toBeGreaterThan(0);
    expect(results.workload.turns).toBe(2);
    expect(results.workload.finalContextBytes).toBeGreaterThan(15_000);

    expect(results.load).toHaveLength(1);
    expect(results.load[0]).toMatchObject({
      sessions: 5,
      turnsPerSession: 2,
      refused: null,
      completedSessions: 5,
      failedSessions: 0,
      turnsCompleted: 10,
    });
    expect(results.targets.length).toBeGreaterThan(0);
    for (const t of results.targets) expect(["met", "not met", "not measured", "info"]).toContain(t.status);

    const md = readFileSync(join(resultsDir, "latest.md"), "utf8");
    expect(md).toContain("## Profile zero");
    expect(md).toContain("Targets of issues #8 and #18");
    expect(md).toContain("Clients that resend everything (issue #18)");
    const svg = readFileSync(join(resultsDir, "latest.svg"), "utf8");
    expect(svg.startsWith("<svg ")).toBe(true);
    expect(svg.trimEnd().endsWith("</svg>")).toBe(true);
    expect(readFileSync(join(REPO_ROOT, "docs", "benchmarks.md"), "utf8")).toBe(readmeBefore);
  }, 200_000);
});
