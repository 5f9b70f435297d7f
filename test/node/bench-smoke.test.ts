/**
 * `npm run bench` works end to end in a tiny configuration, one run for two profiles (a
 * `wrangler dev` start each would cost more than their loops):
 * - zero: A, DG-ws, the stateless and Codex-like clients, the floor comparison on both paths,
 *   then a 5-session load step against Deltagate and the floor on both paths (the stack really
 *   starts: the simulator's processes and a wrangler dev for Deltagate, its TURN_LOG=0 twin and
 *   the floor relay);
 * - providers (issue #26), its default scenarios: the Responses WebSocket client through
 *   Deltagate to the simulator's Anthropic Messages endpoint with and without automatic cache
 *   breakpoints and to its Gemini endpoint, and each provider's API called directly.
 * 3 turns, 1 round. It asserts the shape of the results (each loop reached the API it names, every
 * provider turn reports its cache share, every output file is written), and the figures that
 * follow from the requests alone (upstream bytes after a reconnect, no `cache_control` → nothing
 * read from the cache) — never a timing.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ScenarioReport } from "../../bench/report.ts";
import type { ResultsFile } from "../../bench/results.ts";
import { REPO_ROOT } from "../../scripts/local-stack.ts";
import { type ProcessResult, runProcess } from "../support/e2e-process.ts";

const resultsDir = mkdtempSync(join(tmpdir(), "deltagate-bench-"));

afterAll(() => rmSync(resultsDir, { recursive: true, force: true }));

const TURNS = 3;
/** The run: three wrangler devs' start, 14 warm-up loops, 14 measured ones, the load steps. */
const RUN_MS = 200_000;

let run: ProcessResult | undefined;
let readmeBefore = "";

/**
 * The run's results, once it is known to have ended well (each test checks, so a failed run fails
 * every test with the bench's output rather than a hook, which Vitest reports as skipped tests).
 */
function finished(): { results: ResultsFile; md: string } {
  const diagnostics = `stdout:\n${run?.stdout}\nstderr:\n${run?.stderr}`;
  expect(run?.timedOut, diagnostics).toBe(false);
  expect(run?.code, diagnostics).toBe(0);
  const results = JSON.parse(readFileSync(join(resultsDir, "latest.json"), "utf8")) as ResultsFile;
  expect(results.profiles.map((p) => p.id)).toEqual(["zero", "providers"]);
  expect(readFileSync(join(REPO_ROOT, "docs", "benchmarks.md"), "utf8")).toBe(readmeBefore);
  return { results, md: readFileSync(join(resultsDir, "latest.md"), "utf8") };
}

describe("npm run bench (tiny configuration: the zero and providers profiles)", () => {
  beforeAll(async () => {
    readmeBefore = readFileSync(join(REPO_ROOT, "docs", "benchmarks.md"), "utf8");
    const env: NodeJS.ProcessEnv = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith("BENCH_")),
    );
    Object.assign(env, {
      BENCH_TURNS: String(TURNS),
      BENCH_WARMUP_TURNS: "2",
      BENCH_ROUNDS: "1",
      BENCH_SECONDARY_ROUNDS: "1",
      BENCH_PROFILES: "zero,providers",
      // Chosen for zero only (`profile/ID`): providers runs its defaults, which the second test checks.
      BENCH_SCENARIOS: ["A", "DG-ws", "DG-sl-http", "DG-cx-rc", "FL-ws", "DG-nolog", "DG-st@rt", "FL-st@rt"]
        .map((id) => `zero/${id}`)
        .join(","),
      BENCH_RECONNECT_EVERY: "1",
      BENCH_LOAD_SESSIONS: "5",
      BENCH_LOAD_TURNS: "2",
      BENCH_RESULTS_DIR: resultsDir,
      BENCH_README: "0",
    });
    run = await runProcess(process.execPath, [join(REPO_ROOT, "bench/run.ts")], {
      cwd: REPO_ROOT,
      env,
      timeoutMs: RUN_MS,
    });
  }, RUN_MS + 10_000);

  it("measures the chosen scenarios and the load step and writes latest.{json,md,svg}", () => {
    const { results, md } = finished();
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
    expect(codexLike?.rounds[0]?.sample.turns.map((t) => t.reconnected)).toEqual([
      false,
      ...Array(TURNS - 1).fill(true),
    ]);
    for (const scenario of (profile?.scenarios ?? []).slice(0, 2)) {
      const turns = scenario.rounds[0]?.sample.turns ?? [];
      expect(turns).toHaveLength(TURNS);
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
    expect(a?.upstreamTransports).toEqual({ http: TURNS });
    expect(dg?.versus).toBe("E");
    expect(dg?.viaDeltagate).toBe(true);
    expect(Object.keys(dg?.upstreamTransports ?? {})).toEqual(["ws"]);
    expect(dg?.vsA).toBeGreaterThan(0);
    expect(results.workload.turns).toBe(TURNS);
    expect(results.workload.finalContextBytes).toBeGreaterThan(15_000);

    // Issue #27: the floor relay's loops went through it to the same WebSocket upstream, and each
    // Deltagate loop got its floor, on both paths; the log line its TURN_LOG=0 twin.
    const byId = new Map((profile?.scenarios ?? []).map((s) => [s.id, s]));
    for (const id of ["FL-ws", "FL-st@rt"] as const) {
      expect(byId.get(id)?.via?.gateway).toBe("floor");
      expect(byId.get(id)?.viaDeltagate).toBe(false);
      expect(byId.get(id)?.upstreamTransports).toEqual({ ws: TURNS });
      expect(byId.get(id)?.workerdCpuMsPerTurn).not.toBeNull();
    }
    expect(byId.get("DG-st@rt")?.via).toEqual({ gateway: "deltagate", path: "runtime" });
    expect(
      profile?.floor?.pairs.map((p) => [p.gateway, p.floor, p.path, p.store, p.over.latencyMs?.pairs]),
    ).toEqual([
      ["DG-ws", "FL-ws", "proxy", false, TURNS],
      ["DG-nolog", "FL-ws", "proxy", false, TURNS],
      ["DG-st@rt", "FL-st@rt", "runtime", true, TURNS],
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

    expect(md).toContain("## Profile zero");
    expect(md).toContain("Targets of issues #8, #18, #26 and #27");
    expect(md).toContain("Deltagate over the floor (issue #27)");
    expect(md).toContain("| DG-ws − DG-nolog | dev proxy |");
    expect(md).toContain("Clients that resend everything (issue #18)");
    const svg = readFileSync(join(resultsDir, "latest.svg"), "utf8");
    expect(svg.startsWith("<svg ")).toBe(true);
    expect(svg.trimEnd().endsWith("</svg>")).toBe(true);
  });

  it("runs the providers profile's Claude and Gemini loops and reports each turn's cache share", () => {
    const { results, md } = finished();
    const scenarios = results.profiles[1]?.scenarios ?? [];
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
    expect(md).toContain("## Profile providers");
    expect(md).toContain("Prompt cache (issue #26).");
    expect(md).toContain("| AN-dg: Deltagate WS → Anthropic Messages, automatic cache breakpoints |");
  });
});
