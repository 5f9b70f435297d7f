/**
 * Issue #26's benchmark scenarios run end to end in a tiny configuration: the providers profile
 * alone, 3 turns, 1 round, no load step — the Responses WebSocket client through Deltagate to
 * the simulator's Anthropic Messages endpoint with and without automatic cache breakpoints and to
 * its Gemini endpoint, and each provider's API called directly. It asserts the shape of the
 * results (each loop reached the provider's own API, every turn reports its cache share, the
 * table and the target row are written) and the cache figures that follow from the requests
 * alone (no `cache_control` → nothing read) — never a timing.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ScenarioReport } from "../../bench/report.ts";
import type { ResultsFile } from "../../bench/results.ts";
import { REPO_ROOT } from "../../scripts/local-stack.ts";
import { runProcess } from "../support/e2e-process.ts";

const resultsDir = mkdtempSync(join(tmpdir(), "deltagate-bench-providers-"));

afterAll(() => rmSync(resultsDir, { recursive: true, force: true }));

const TURNS = 3;

describe("npm run bench, providers profile (tiny configuration)", () => {
  it("runs the Claude and Gemini loops and reports each turn's cache share", async () => {
    const readmeBefore = readFileSync(join(REPO_ROOT, "docs", "benchmarks.md"), "utf8");
    const env: NodeJS.ProcessEnv = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith("BENCH_")),
    );
    Object.assign(env, {
      BENCH_TURNS: String(TURNS),
      BENCH_WARMUP_TURNS: "2",
      BENCH_SECONDARY_ROUNDS: "1",
      BENCH_PROFILES: "providers",
      BENCH_LOAD_SESSIONS: "0",
      BENCH_RESULTS_DIR: resultsDir,
      BENCH_README: "0",
    });
    const run = await runProcess(process.execPath, [join(REPO_ROOT, "bench/run.ts")], {
      cwd: REPO_ROOT,
      env,
      timeoutMs: 150_000,
    });
    const diagnostics = `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`;
    expect(run.timedOut, diagnostics).toBe(false);
    expect(run.code, diagnostics).toBe(0);

    const results = JSON.parse(readFileSync(join(resultsDir, "latest.json"), "utf8")) as ResultsFile;
    expect(results.profiles.map((p) => p.id)).toEqual(["providers"]);
    expect(results.load).toEqual([]);
    const scenarios = results.profiles[0]?.scenarios ?? [];
    // The profile's defaults, with A (every profile's baseline) first.
    expect(scenarios.map((s) => [s.id, s.status, s.loops])).toEqual([
      ["A", "ok", 1],
      ["AN-dg", "ok", 1],
      ["AN-nocache", "ok", 1],
      ["AN-direct", "ok", 1],
      ["GM-dg", "ok", 1],
      ["GM-direct", "ok", 1],
    ]);
    const byId = new Map<string, ScenarioReport>(scenarios.map((s) => [s.id, s]));
    // Every loop reached the provider's own API, one request a turn.
    for (const id of ["AN-dg", "AN-nocache", "AN-direct"]) {
      expect(byId.get(id)?.upstreamTransports, id).toEqual({ anthropic: TURNS });
    }
    for (const id of ["GM-dg", "GM-direct"]) {
      expect(byId.get(id)?.upstreamTransports, id).toEqual({ gemini: TURNS });
    }
    expect(byId.get("AN-dg")?.versus).toBe("AN-direct");
    expect(byId.get("GM-dg")?.versus).toBe("GM-direct");
    expect(byId.get("A")?.cache).toBeNull(); // the Responses simulator reports no cached tokens here

    for (const id of ["AN-dg", "AN-nocache", "AN-direct", "GM-dg", "GM-direct"]) {
      const cache = byId.get(id)?.cache;
      expect(cache?.perTurn, id).toHaveLength(TURNS);
      for (const share of cache?.perTurn ?? []) {
        expect(share, id).not.toBeNull();
        expect(share, id).toBeGreaterThanOrEqual(0);
        expect(share, id).toBeLessThanOrEqual(1);
      }
      expect(cache?.fromTurn2?.turns, id).toBe(TURNS - 1);
      for (const t of byId.get(id)?.rounds[0]?.sample.turns ?? []) {
        expect(t.cache?.inputTokens, id).toBeGreaterThan(0);
      }
    }
    // Without cache_control nothing is read from Claude's cache; with Deltagate's breakpoints and
    // with Gemini's implicit cache the previous turn's prompt is.
    expect(byId.get("AN-nocache")?.cache?.tokensFromTurn2?.share).toBe(0);
    expect(byId.get("AN-direct")?.cache?.tokensFromTurn2?.share).toBe(0);
    for (const id of ["AN-dg", "GM-dg", "GM-direct"]) {
      expect(byId.get(id)?.cache?.fromTurn2?.min, id).toBeGreaterThan(0);
    }

    const target = results.targets.find((t) => t.where.startsWith("providers: AN-dg"));
    expect(target?.target).toBe("≥ 90% every turn");
    expect(["met", "not met"]).toContain(target?.status);
    const md = readFileSync(join(resultsDir, "latest.md"), "utf8");
    expect(md).toContain("## Profile providers");
    expect(md).toContain("Prompt cache (issue #26).");
    expect(md).toContain("| AN-dg: Deltagate WS → Anthropic Messages, automatic cache breakpoints |");
    expect(readFileSync(join(REPO_ROOT, "docs", "benchmarks.md"), "utf8")).toBe(readmeBefore);
  }, 180_000);
});
