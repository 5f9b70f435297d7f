/**
 * `npm run bench`: the agent-loop benchmark of Deltagate against every alternative a user picks
 * and against the floor of its runtime (scenarios.ts, floor-report.ts), in several network
 * profiles and model speeds (profiles.ts), in one run: one unmeasured short warm-up loop per
 * scenario, then interleaved rounds (every (profile, scenario) pair once per round, the order
 * rotated each round), then the load mode (load.ts) against Deltagate and the floor. Writes
 * `latest.json` (every raw number), `latest.md` (tables) and `latest.svg` (chart) to
 * bench/results/ and, after a default run, the benchmark block of docs/benchmarks.md (readme-block.ts).
 * Settings: bench/config.ts (env `BENCH_*`, listed in bench/README.md).
 * Owns the lifetime of the stack (stack.ts): it is stopped on completion, on error, on
 * SIGINT/SIGTERM/SIGHUP and when the parent process dies. Exit code 0 when every scenario was
 * measured, 1 on a fatal error, 3 when a scenario was unavailable or failed (the results still
 * get written).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { arch, cpus, loadavg, platform, release, totalmem } from "node:os";
import { join, resolve } from "node:path";
import { REPO_ROOT, wranglerEnv } from "../scripts/local-stack.ts";
import { DEFAULT_CONNECTION_CACHE_SIZE } from "../simulator/store.ts";
import { type BenchConfig, isDefaultRun, loadConfig, scenariosFor } from "./config.ts";
import { buildFloorReport } from "./floor-report.ts";
import type { GatewayId } from "./gateways.ts";
import { parseLinkSpec } from "./link-spec.ts";
import { type LoadStep, runLoadStep } from "./load.ts";
import type { LoopSample } from "./metrics.ts";
import { describeModelTime, MODEL_TIMES } from "./model-time.ts";
import { openFileLimit, type StackCpu, workerdCount } from "./proc-stats.ts";
import {
  hopsBetween,
  PROFILE_IDS,
  type Profile,
  profileDefs,
  startProfile,
  upstreamKey,
} from "./profiles.ts";
import { BENCH_PAGE } from "./readme-block.ts";
import { buildReport, newScenarioRun, type ScenarioRun } from "./report.ts";
import { checkTargets, type ProfileResult, type ResultsFile } from "./results.ts";
import { type ScenarioId, type ScenarioRunParams, scenarioById } from "./scenarios.ts";
import { type BenchStack, type GatewayStack, startBenchStack, type UpstreamNeed } from "./stack.ts";
import { renderChart } from "./svg-chart.ts";
import { renderMarkdown } from "./tables.ts";
import { TIMING_EVENT_TYPE, TIMING_OPT_IN_HEADER } from "./timing-hook.ts";
import { updateReadme as updateReadmeBlock } from "./update-readme.ts";
import { loopNonce, workloadFacts } from "./workload.ts";

/** How often the parent-death watchdog looks at `process.ppid`, in ms. */
const PARENT_POLL_MS = 1_000;
/** Wait after a loop before reading workerd's CPU, so its tail work (socket close) counts to it. */
const SETTLE_MS = 50;
/** Turn and handshake limits of the measured loops. */
const TURN_TIMEOUT_MS = 60_000;
const CONNECT_TIMEOUT_MS = 15_000;
/** Turn limit in the load mode, where a turn may queue behind a thousand others. */
const LOAD_TURN_TIMEOUT_MS = 180_000;
const LOAD_CONNECT_TIMEOUT_MS = 60_000;

/** Set on a signal: no further loop starts and no results file is written from a cut-short run. */
let interrupted = false;

function assertNotInterrupted(): void {
  if (interrupted) throw new Error("interrupted");
}

function log(line: string): void {
  process.stderr.write(`[bench] ${line}\n`);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function gitInfo(): { commit: string; dirty: boolean } | null {
  try {
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: REPO_ROOT })
      .toString()
      .trim();
    const status = execFileSync("git", ["status", "--porcelain"], { cwd: REPO_ROOT }).toString();
    return { commit, dirty: status.trim() !== "" };
  } catch {
    return null;
  }
}

function packageVersion(name: string): string {
  try {
    const manifest = JSON.parse(
      readFileSync(join(REPO_ROOT, "node_modules", name, "package.json"), "utf8"),
    ) as {
      version?: string;
    };
    return manifest.version ?? "unknown";
  } catch {
    return "unknown";
  }
}

/** Writes `text` to `path` via a temp file, so an interrupted run never leaves half a file. */
function writeAtomically(path: string, text: string): void {
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

/** One (profile, scenario) pair: warmed up once, run once per round. */
interface Cell {
  profile: Profile;
  run: ScenarioRun;
  rounds: number;
}

/** `after − before` of one field of two CPU readings, or null when either is missing. */
function cpuDelta(
  before: StackCpu | null,
  after: StackCpu | null,
  pick: (c: StackCpu) => number | null,
): number | null {
  const b = before ? pick(before) : null;
  const a = after ? pick(after) : null;
  return a !== null && b !== null ? a - b : null;
}

/**
 * One loop of `cell`, with the CPU its gateway's `wrangler dev` spent meanwhile (a direct loop:
 * Deltagate's, idle).
 */
async function measure(
  cell: Cell,
  config: BenchConfig,
  nonce: string,
  turns: number,
  stack: BenchStack,
): Promise<LoopSample> {
  const params: ScenarioRunParams = {
    targets: cell.profile.targets,
    turns,
    nonce,
    reconnectEvery: config.BENCH_RECONNECT_EVERY,
    perMessageDeflate: config.BENCH_WS_DEFLATE,
    askTiming: config.BENCH_TIMING,
    turnTimeoutMs: TURN_TIMEOUT_MS,
    connectTimeoutMs: CONNECT_TIMEOUT_MS,
  };
  const via = cell.run.scenario.via;
  const gateway: GatewayStack = (via && stack.gateways.get(via.gateway)) || stack.deltagate;
  const hopsBefore = cell.profile.snapshot();
  const cpuBefore = gateway.cpu();
  const loop = await cell.run.scenario.run(params);
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const cpuAfter = gateway.cpu();
  return {
    ...loop,
    hops: hopsBetween(hopsBefore, cell.profile.snapshot()),
    workerdCpuMs: cpuDelta(cpuBefore, cpuAfter, (c) => c.workerdMs),
    devProxyCpuMs: cpuDelta(cpuBefore, cpuAfter, (c) => c.proxyMs),
    wranglerCpuMs: cpuDelta(cpuBefore, cpuAfter, (c) => c.wranglerMs),
  };
}

/** The gateways besides Deltagate the chosen scenarios and load steps go through. */
function gatewaysNeeded(cells: Array<{ ids: ScenarioId[] }>, config: BenchConfig): GatewayId[] {
  const needed = new Set<GatewayId>();
  for (const { ids } of cells) {
    for (const id of ids) {
      const via = scenarioById(id).via;
      if (via) needed.add(via.gateway);
    }
  }
  if (config.BENCH_LOAD_SESSIONS.length > 0) for (const g of config.BENCH_LOAD_GATEWAYS) needed.add(g);
  needed.delete("deltagate");
  return [...needed];
}

async function main(): Promise<number> {
  const config = loadConfig(process.env);
  const resultsDir = resolve(config.BENCH_RESULTS_DIR ?? join(REPO_ROOT, "bench", "results"));
  const defs = profileDefs(parseLinkSpec(config.BENCH_LINK)).filter((d) =>
    config.BENCH_PROFILES.includes(d.id),
  );
  if (defs.length === 0) throw new Error(`BENCH_PROFILES selects none of ${PROFILE_IDS.join(", ")}`);
  const needs: UpstreamNeed[] = defs.map((d) => ({
    key: upstreamKey(d),
    modelTime: d.modelTime,
    edgeProvider: d.edgeProvider,
  }));
  const loadKey = upstreamKey({ modelTime: "zero", edgeProvider: null });
  if (config.BENCH_LOAD_SESSIONS.length > 0)
    needs.push({ key: loadKey, modelTime: "zero", edgeProvider: null });

  const extraGateways = gatewaysNeeded(
    defs.map((d) => ({ ids: scenariosFor(d, config.BENCH_SCENARIOS) })),
    config,
  );
  log(`starting the simulators and wrangler dev (deltagate${extraGateways.map((g) => `, ${g}`).join("")})…`);
  let stack: BenchStack | null = null;
  const profiles: Profile[] = [];
  stopOnSignals(() => stack);
  stack = await startBenchStack(needs, {
    verbose: config.BENCH_VERBOSE,
    storage: config.BENCH_STORAGE,
    gateways: extraGateways,
  });
  try {
    for (const def of defs) profiles.push(await startProfile(def, stack.viewFor(upstreamKey(def))));
    for (const g of stack.gateways.values()) {
      log(`${g.id} at ${g.urls.proxy} (runtime: ${g.urls.runtime ?? "not found"})`);
    }
    log(`${workerdCount()} workerd process(es) found for CPU accounting`);
    const cells: Cell[] = profiles.flatMap((profile) =>
      scenariosFor(profile.def, config.BENCH_SCENARIOS).map((id) => ({
        profile,
        run: newScenarioRun(scenarioById(id)),
        rounds: profile.def.primary ? config.BENCH_ROUNDS : config.BENCH_SECONDARY_ROUNDS,
      })),
    );
    const name = (cell: Cell): string => `${cell.profile.def.id}/${cell.run.scenario.id}`;
    const started = performance.now();
    const loadBefore = loadavg()[0] ?? 0;

    // One short warm-up loop per scenario (its first profile): JIT, routes, Durable Object code.
    const warmed = new Set<ScenarioId>();
    for (const cell of cells) {
      assertNotInterrupted();
      if (warmed.has(cell.run.scenario.id)) continue;
      warmed.add(cell.run.scenario.id);
      try {
        const sample = await measure(cell, config, loopNonce("warmup"), config.BENCH_WARMUP_TURNS, stack);
        log(`warm-up ${name(cell)}: ${sample.loopMs.toFixed(0)} ms`);
      } catch (error) {
        cell.run.status = "unavailable";
        cell.run.error = errorText(error);
        log(`warm-up ${name(cell)} failed, scenario unavailable: ${cell.run.error}`);
      }
    }

    const maxRounds = Math.max(...cells.map((c) => c.rounds));
    for (let round = 0; round < maxRounds; round++) {
      const active = cells.filter((c) => c.rounds > round);
      const order = active.map((_, i) => active[(i + round) % active.length]!);
      for (const cell of order) {
        assertNotInterrupted();
        if (cell.run.status !== "ok") continue;
        try {
          const sample = await measure(cell, config, loopNonce(`r${round}`), config.BENCH_TURNS, stack);
          cell.run.loops.set(round, sample);
          const extras = [
            sample.workerdCpuMs !== null ? `workerd ${sample.workerdCpuMs.toFixed(0)} ms CPU` : "",
            sample.turns.some((t) => t.reconnected)
              ? `${sample.turns.filter((t) => t.reconnected).length} reconnects, ${sample.turns.filter((t) => t.fallback).length} fallbacks`
              : "",
          ].filter((s) => s !== "");
          log(
            `round ${round + 1}/${cell.rounds} ${name(cell)}: loop ${sample.loopMs.toFixed(0)} ms` +
              (extras.length > 0 ? `, ${extras.join(", ")}` : ""),
          );
        } catch (error) {
          cell.run.status = "failed";
          cell.run.error = `round ${round + 1}: ${errorText(error)}`;
          log(`round ${round + 1} ${name(cell)} failed: ${cell.run.error}`);
        }
      }
    }

    const load: LoadStep[] = [];
    const loadView = config.BENCH_LOAD_SESSIONS.length > 0 ? stack.viewFor(loadKey) : null;
    for (const sessions of config.BENCH_LOAD_SESSIONS) {
      if (!loadView) break;
      // Each path, Deltagate then the floor back to back, so the two compare like with like.
      for (const path of config.BENCH_LOAD_PATHS) {
        for (const id of config.BENCH_LOAD_GATEWAYS) {
          assertNotInterrupted();
          const gateway = stack.gateways.get(id);
          const baseUrl = gateway ? (path === "proxy" ? gateway.urls.proxy : gateway.urls.runtime) : null;
          if (!gateway || !baseUrl) {
            log(`load ${sessions} on ${id} (${path}): not reachable, skipped`);
            continue;
          }
          log(`load on ${id} (${path}): ${sessions} concurrent sessions × ${config.BENCH_LOAD_TURNS} turns…`);
          const step = await runLoadStep(sessions, {
            gateway: id,
            path,
            baseUrl,
            apiKey: loadView.deltagateApiKey,
            model: loadView.models.ws,
            turnsPerSession: config.BENCH_LOAD_TURNS,
            perMessageDeflate: config.BENCH_WS_DEFLATE,
            askTiming: config.BENCH_TIMING,
            connectTimeoutMs: LOAD_CONNECT_TIMEOUT_MS,
            turnTimeoutMs: LOAD_TURN_TIMEOUT_MS,
            cpu: () => gateway.cpu(),
            rss: () => gateway.rss(),
          });
          load.push(step);
          log(
            step.refused
              ? `load ${sessions} on ${id} (${path}): refused (${step.refused})`
              : `load ${sessions} on ${id} (${path}): ${step.turnsPerSecond.toFixed(0)} turns/s, p99 ${step.latencyMs.p99.toFixed(0)} ms, ${step.failedSessions} failed`,
          );
        }
      }
    }
    const elapsedS = (performance.now() - started) / 1000;
    assertNotInterrupted();

    const profileResults: ProfileResult[] = profiles.map((profile) => {
      const own = cells.filter((c) => c.profile === profile);
      return {
        id: profile.def.id,
        label: profile.label,
        assumptions: profile.def.assumptions,
        rounds: own[0]?.rounds ?? 0,
        scenarios: buildReport(own.map((c) => c.run)),
        floor: buildFloorReport(own.map((c) => c.run)),
      };
    });
    const finalContext = profileResults
      .flatMap((p) => p.scenarios)
      .find((s) => s.id === "A" && s.lastTurnPayloadBytes !== null)?.lastTurnPayloadBytes;
    const results: ResultsFile = {
      date: new Date().toISOString(),
      durationSeconds: Math.round(elapsedS),
      git: gitInfo(),
      machine: {
        node: process.version,
        platform: `${platform()} ${release()} ${arch()}`,
        cpuCount: cpus().length,
        cpuModel: cpus()[0]?.model.trim() ?? "unknown",
        totalMemoryBytes: totalmem(),
        loadAverage1m: { before: loadBefore, after: loadavg()[0] ?? 0 },
        storageFileSystem: stack.storage.fileSystem,
        workerdProcesses: workerdCount(),
        openFileLimit: openFileLimit(),
      },
      versions: {
        wrangler: packageVersion("wrangler"),
        openai: packageVersion("openai"),
        ws: packageVersion("ws"),
      },
      config: {
        rounds: config.BENCH_ROUNDS,
        secondaryRounds: config.BENCH_SECONDARY_ROUNDS,
        turns: config.BENCH_TURNS,
        warmupTurns: config.BENCH_WARMUP_TURNS,
        profiles: defs.map((d) => d.id),
        scenarios:
          config.BENCH_SCENARIOS?.map((c) => (c.profile ? `${c.profile}/${c.id}` : c.id)) ??
          "per-profile defaults",
        reconnectEvery: config.BENCH_RECONNECT_EVERY,
        link: config.BENCH_LINK,
        loadSessions: config.BENCH_LOAD_SESSIONS,
        loadTurns: config.BENCH_LOAD_TURNS,
        loadGateways: config.BENCH_LOAD_GATEWAYS,
        loadPaths: config.BENCH_LOAD_PATHS,
        wsPerMessageDeflateOffered: config.BENCH_WS_DEFLATE,
        timingOptIn: config.BENCH_TIMING
          ? `${TIMING_OPT_IN_HEADER}: true; reads ${TIMING_EVENT_TYPE} and Server-Timing`
          : "off",
        order:
          "one unmeasured short warm-up loop per scenario, then rounds over every (profile, scenario) pair with the order rotated by one each round",
      },
      workload: { ...workloadFacts(config.BENCH_TURNS), finalContextBytes: finalContext ?? null },
      simulator: {
        modelTimes: Object.fromEntries(
          [...new Set(needs.map((n) => n.modelTime))].map((id) => [
            id,
            { ...MODEL_TIMES[id], description: describeModelTime(id) },
          ]),
        ),
        wsCacheSize: DEFAULT_CONNECTION_CACHE_SIZE,
        wsPerMessageDeflate: true,
        process:
          "one process per model-time setting, apart from the benchmark's (bench/simulator-process.ts)",
      },
      deltagate: {
        routes: JSON.parse(stack.routes) as unknown,
        runtime: `wrangler dev (local workerd, Worker snapshot), default settings; wrangler's local observability ${
          wranglerEnv(process.env, false).X_LOCAL_OBSERVABILITY === "false" ? "off" : "on"
        } (X_LOCAL_OBSERVABILITY); Durable Object storage on ${stack.storage.fileSystem ?? "an unknown file system"} (BENCH_STORAGE=${config.BENCH_STORAGE})`,
        gateways: Object.fromEntries([...stack.gateways].map(([id, g]) => [id, g.urls])),
      },
      profiles: profileResults,
      load,
      targets: checkTargets(profileResults, load),
    };
    const markdown = renderMarkdown(results);
    console.log(`\n${markdown}`);
    mkdirSync(resultsDir, { recursive: true });
    writeAtomically(join(resultsDir, "latest.json"), `${JSON.stringify(results, null, 2)}\n`);
    writeAtomically(join(resultsDir, "latest.md"), markdown);
    writeAtomically(join(resultsDir, "latest.svg"), renderChart(results));
    log(`wrote ${join(resultsDir, "latest.{json,md,svg}")} (${elapsedS.toFixed(0)} s of loops)`);
    const updateReadme =
      config.BENCH_README === "1" || (config.BENCH_README === "auto" && isDefaultRun(process.env));
    if (updateReadme) {
      updateReadmeBlock(results, join(REPO_ROOT, BENCH_PAGE));
      log(`rewrote the benchmark block of ${BENCH_PAGE}`);
    } else {
      log(`${BENCH_PAGE} left as it is (not a default run; \`npm run bench:readme\` rewrites its block)`);
    }
    if (elapsedS > 600) log(`note: the loops took ${elapsedS.toFixed(0)} s, more than the 10-minute budget`);
    return profileResults.every((p) => p.scenarios.every((r) => r.status === "ok")) ? 0 : 3;
  } finally {
    await Promise.all(profiles.map((p) => p.close()));
    await stack.stop();
  }
}

/**
 * Stops the stack (wrangler's process group, the simulators, the proxies) on signals and parent
 * death, then exits with 130. `current` returns the stack once it is started (null before).
 */
function stopOnSignals(current: () => BenchStack | null): void {
  const shutdown = (why: string): void => {
    if (interrupted) return;
    interrupted = true;
    log(`${why}: stopping Deltagate and the simulators…`);
    const stack = current();
    if (!stack) process.exit(130); // local-stack's `exit` hook kills a wrangler that is starting
    void stack.stop().finally(() => process.exit(130));
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => shutdown(signal));
  // npm does not pass SIGTERM on through its `sh -c`: a reparented process means our caller is gone.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) shutdown("parent process exited");
  }, PARENT_POLL_MS).unref();
}

try {
  process.exit(await main());
} catch (error) {
  if (interrupted) process.exit(130);
  console.error(`bench failed: ${errorText(error)}`);
  process.exit(1);
}
