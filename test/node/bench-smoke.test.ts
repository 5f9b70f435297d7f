/**
 * `npm run bench` works end to end in a tiny configuration: 2 turns, 1 round, A and DG-ws on
 * loopback (the stack really starts: the simulator's process and a wrangler dev for Deltagate,
 * its TURN_LOG=0 twin and the floor relay), the floor comparison on both paths, a 5-session load
 * step against Deltagate and the floor on both paths. It asserts the shape of the results and
 * that every output file is written — never a timing.
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
      BENCH_SCENARIOS: "A,DG-ws,DG-sl-http,DG-cx-rc,FL-ws,DG-nolog,DG-st@rt,FL-st@rt",
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
      ["FL-ws", "ok", 1],
      ["DG-nolog", "ok", 1],
      ["DG-st@rt", "ok", 1],
      ["FL-st@rt", "ok", 1],
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

    // Issue #27: the floor relay's loops went through it to the same WebSocket upstream, and each
    // Deltagate loop got its floor, on both paths; the log line its TURN_LOG=0 twin.
    const byId = new Map((profile?.scenarios ?? []).map((s) => [s.id, s]));
    for (const id of ["FL-ws", "FL-st@rt"] as const) {
      expect(byId.get(id)?.via?.gateway).toBe("floor");
      expect(byId.get(id)?.viaDeltagate).toBe(false);
      expect(byId.get(id)?.upstreamTransports).toEqual({ ws: 2 });
      expect(byId.get(id)?.workerdCpuMsPerTurn).not.toBeNull();
    }
    expect(byId.get("DG-st@rt")?.via).toEqual({ gateway: "deltagate", path: "runtime" });
    expect(
      profile?.floor?.pairs.map((p) => [p.gateway, p.floor, p.path, p.store, p.over.latencyMs?.pairs]),
    ).toEqual([
      ["DG-ws", "FL-ws", "proxy", false, 2],
      ["DG-nolog", "FL-ws", "proxy", false, 2],
      ["DG-st@rt", "FL-st@rt", "runtime", true, 2],
    ]);
    expect(profile?.floor?.logLine.map((c) => [c.on, c.off, c.path])).toEqual([
      ["DG-ws", "DG-nolog", "proxy"],
    ]);
    expect(Object.keys(results.deltagate.gateways ?? {}).sort()).toEqual([
      "deltagate",
      "deltagate-nolog",
      "floor",
    ]);

    expect(results.load.map((s) => [s.gateway, s.path])).toEqual([
      ["deltagate", "proxy"],
      ["floor", "proxy"],
      ["deltagate", "runtime"],
      ["floor", "runtime"],
    ]);
    for (const step of results.load) {
      expect(step).toMatchObject({
        sessions: 5,
        turnsPerSession: 2,
        refused: null,
        completedSessions: 5,
        failedSessions: 0,
        turnsCompleted: 10,
      });
    }
    expect(results.targets.length).toBeGreaterThan(0);
    for (const t of results.targets) expect(["met", "not met", "not measured", "info"]).toContain(t.status);

    const md = readFileSync(join(resultsDir, "latest.md"), "utf8");
    expect(md).toContain("## Profile zero");
    expect(md).toContain("Targets of issues #8, #18, #26 and #27");
    expect(md).toContain("Deltagate over the floor (issue #27)");
    expect(md).toContain("| DG-ws − DG-nolog | dev proxy |");
    expect(md).toContain("Clients that resend everything (issue #18)");
    const svg = readFileSync(join(resultsDir, "latest.svg"), "utf8");
    expect(svg.startsWith("<svg ")).toBe(true);
    expect(svg.trimEnd().endsWith("</svg>")).toBe(true);
    expect(readFileSync(join(REPO_ROOT, "docs", "benchmarks.md"), "utf8")).toBe(readmeBefore);
  }, 200_000);
});
