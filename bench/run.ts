/**
 * `npm run bench`: side-by-side agent-loop benchmark of Deltagate against a plain HTTP agent loop
 * against the reference simulator (scenarios in scenarios.ts), in one or two network profiles
 * (profiles.ts): "loopback" (everything on 127.0.0.1) and "link" (the client's hop through a
 * link-shaping proxy, `BENCH_LINK`).
 * Starts the simulator and `wrangler dev` (scripts/local-stack.ts, a frozen snapshot of the
 * Worker), runs one unmeasured warm-up loop per (profile, scenario), then `BENCH_ROUNDS`
 * interleaved rounds (every pair once per round, the order rotated each round), prints the
 * Markdown tables and writes bench/results/latest.{json,md}.
 * Env: BENCH_ROUNDS (default 5, ≥ 3), BENCH_TURNS (default 20), BENCH_TOOL_OUTPUT_BYTES (default
 * 2048), BENCH_SCENARIOS (default "A,B,C,D"; A is always included as the baseline),
 * BENCH_PROFILES (default "loopback,link"), BENCH_LINK (default link-spec.ts `DEFAULT_LINK`),
 * BENCH_VERBOSE=1 (wrangler's and the simulator's output).
 * Owns the stack's lifetime: it is stopped on completion, on error, on SIGINT/SIGTERM/SIGHUP and
 * when the parent process dies. Exit code 0 when every scenario was measured, 1 on a fatal error,
 * 3 when a scenario was unavailable or failed (the results still get written).
 */
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { arch, cpus, loadavg, platform, release, totalmem } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import {
  freePort,
  LOCAL_DEV_KEY,
  type LocalStack,
  REPO_ROOT,
  startLocalStack,
} from "../scripts/local-stack.ts";
import { DEFAULT_CONNECTION_CACHE_SIZE } from "../simulator/store.ts";
import { DEFAULT_TIMING } from "../simulator/timing.ts";
import {
  DEFAULT_LINK,
  describeLink,
  describeRate,
  formatLinkSpec,
  type LinkSpec,
  parseLinkSpec,
} from "./link-spec.ts";
import { PROFILE_IDS, type Profile, type ProfileId, startProfile, wireBetween } from "./profiles.ts";
import {
  buildReport,
  markdownTable,
  newScenarioRun,
  type ProfileReport,
  type ScenarioRun,
  summaryTable,
  wireTable,
} from "./report.ts";
import { type BenchTargets, benchUpstreams, SCENARIOS, type Scenario } from "./scenarios.ts";
import { HTTP_MODEL, WS_UPSTREAM_MODEL } from "./workload.ts";

const RESULTS_DIR = join(REPO_ROOT, "bench", "results");
/** How often the parent-death watchdog looks at `process.ppid`, in ms. */
const PARENT_POLL_MS = 1_000;

/** Set on a signal: no further loop starts and no results file is written from a cut-short run. */
let interrupted = false;

function assertNotInterrupted(): void {
  if (interrupted) throw new Error("interrupted");
}

const envSchema = z.object({
  BENCH_ROUNDS: z.coerce.number().int().min(3).max(50).default(5),
  BENCH_TURNS: z.coerce.number().int().min(2).max(100).default(20),
  BENCH_TOOL_OUTPUT_BYTES: z.coerce.number().int().min(1).max(1_000_000).default(2_048),
  BENCH_SCENARIOS: z
    .string()
    .default("A,B,C,D")
    .transform((s) => s.split(",").map((x) => x.trim().toUpperCase()))
    .pipe(z.array(z.enum(["A", "B", "C", "D"])).min(1)),
  BENCH_PROFILES: z
    .string()
    .default(PROFILE_IDS.join(","))
    .transform((s) => s.split(",").map((x) => x.trim().toLowerCase()))
    .pipe(z.array(z.enum(PROFILE_IDS)).min(1)),
  BENCH_LINK: z.string().default(DEFAULT_LINK),
  BENCH_VERBOSE: z.enum(["0", "1"]).default("0"),
});

type BenchConfig = z.infer<typeof envSchema>;

function log(line: string): void {
  process.stderr.write(`[bench] ${line}\n`);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Best-effort `git` facts for the results file (null outside a checkout). */
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
  const manifest = JSON.parse(
    readFileSync(join(REPO_ROOT, "node_modules", name, "package.json"), "utf8"),
  ) as {
    version?: string;
  };
  return manifest.version ?? "unknown";
}

/** Writes `text` to `path` via a temp file, so an interrupted run never leaves half a file. */
function writeAtomically(path: string, text: string): void {
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

/** The machine a run was measured on (written to latest.json). */
interface MachineInfo {
  node: string;
  platform: string;
  cpuCount: number;
  cpuModel: string;
  totalMemoryBytes: number;
  /** 1-minute load average when the loops started and when they ended (other work skews timings). */
  loadAverage1m: { before: number; after: number };
}

/** One (profile, scenario) pair: the unit that is warmed up once and run once per round. */
interface Cell {
  profile: Profile;
  scenario: Scenario;
  run: ScenarioRun;
}

/** What each profile assumes, for latest.md and latest.json. */
function profileNote(id: ProfileId, spec: LinkSpec): string {
  if (id === "loopback") {
    return (
      "**loopback**: every hop on 127.0.0.1. The client's link costs nothing, so A re-sending the whole " +
      "history costs only serialization, and HTTP keep-alive makes its requests cheap: this profile isolates " +
      "Deltagate's own cost (the extra hop, the Durable Object, rebuilding the context), not the product's claim."
    );
  }
  return (
    `**link** (\`BENCH_LINK=${formatLinkSpec(spec)}\`): the client's hop — A: client → simulator; ` +
    "B/C/D: client → Deltagate — goes through a link-shaping TCP proxy (bench/link-proxy.ts) in the benchmark's " +
    `process: ${spec.rttMs / 2} ms one-way latency each direction (RTT ${spec.rttMs} ms), ` +
    `uplink (client → server) ${describeRate(spec.upBitsPerSecond)}, downlink ${describeRate(spec.downBitsPerSecond)}, ` +
    "applied per TCP connection as a FIFO link (each 4 KiB slice is serialized at the bandwidth, then delayed by " +
    "the latency; delivery order is kept), and a new connection's first byte held for " +
    `${spec.handshakeRtts} RTT(s) of connection setup (TCP + TLS 1.3 for \`hs=2\`; the benchmark itself speaks ` +
    "plain http/ws). The link stands for a typical mobile or home-broadband client (tens of ms to the nearest " +
    "edge, an uplink of a few Mbit/s, a downlink ten times that); it is an assumption, override it with " +
    "`BENCH_LINK`. Deltagate → simulator stays on loopback, standing for the edge → inference path on a fast " +
    "backbone. Two simplifications cut in opposite directions: A reaches the upstream over the same short-RTT " +
    "link as Deltagate's edge (a real provider is often farther than the nearest edge: generous to A), and " +
    "Deltagate's edge → upstream hop costs nothing (in reality it adds that path's RTT per turn for B/D's HTTP " +
    "upstream and per connection for C: generous to Deltagate). The simulator starts a turn's simulated model time " +
    "once the whole request body has arrived, so a slow upload never overlaps model time. A's client is Node's `fetch` (undici) with HTTP " +
    "keep-alive, so a loop's turns share one connection (the proxy counts connections per loop). Not modelled: " +
    "packet loss, jitter, TCP slow start (which would slow A's large uploads further on a fresh or idle " +
    "connection), TLS CPU cost, HTTP/2."
  );
}

function methodNote(config: BenchConfig, machine: MachineInfo): string {
  return (
    `Method: one \`npm run bench\` run on ${machine.cpuCount} CPU(s) (${machine.cpuModel}, 1-minute load ` +
    `${machine.loadAverage1m.before.toFixed(1)} at the start, ${machine.loadAverage1m.after.toFixed(1)} at the end), ` +
    `Node ${machine.node}, Deltagate under \`wrangler dev\` (local workerd running a snapshot of the Worker, not the ` +
    "Cloudflare edge) and the reference simulator in the benchmark's own process, all on 127.0.0.1. Each loop is a " +
    `${config.BENCH_TURNS}-turn agent loop (\`[sim:tools=${config.BENCH_TURNS - 1}]\`, one \`exec_command\` function ` +
    `tool, each \`function_call_output\` ${config.BENCH_TOOL_OUTPUT_BYTES} bytes of \`ls -la\`-like text) in a fresh ` +
    "session, with a unique first message so no loop reuses another's prompt-cache prefix. After one unmeasured " +
    "warm-up loop per (profile, scenario), all pairs ran interleaved for " +
    `${config.BENCH_ROUNDS} rounds (order rotated each round); each number is the median over rounds of the ` +
    "per-loop value, and each ratio is the median of the same-round ratio scenario ÷ A of the same profile. " +
    "Turn latency is measured by the client from sending the request (HTTP body / WebSocket frame) to receiving " +
    "`response.completed`; TTFT to the first `response.output_item.added` or `response.output_text.delta`; loop time from " +
    "the start of the loop (including the WebSocket handshake) to the last `response.completed`. Client and upstream " +
    "bytes are request payloads (JSON bodies / text frames, without HTTP headers or framing); upstream bytes are " +
    "what the simulator's recorder received per turn; the link table's bytes are what crossed the shaped link. " +
    "The simulator's latency model " +
    `(${DEFAULT_TIMING.firstTokenOverheadMs} ms first-event overhead, ${DEFAULT_TIMING.prefillMsPerToken} ms prefill per ` +
    `uncached input token, ${DEFAULT_TIMING.decodeTokensPerSecond} output tokens/s, prefix caches) charges prefill only for ` +
    "uncached tokens, and every scenario keeps its prefix cached, so the differences measured here come from " +
    "transport, the client's link, serialization and Deltagate's own work, not from simulated model time. A's " +
    "HTTP client is Node's `fetch` (undici) with keep-alive in both profiles."
  );
}

/** Runs one loop of a cell, with the client-link traffic it caused (link profile). */
async function runCell(cell: Cell, params: { turns: number; toolOutputBytes: number }, nonce: string) {
  const before = cell.profile.snapshot();
  const sample = await cell.scenario.run(cell.profile.targets, { ...params, nonce });
  return { ...sample, wire: wireBetween(before, cell.profile.snapshot()) };
}

async function main(): Promise<number> {
  const config = envSchema.parse(process.env);
  const spec = parseLinkSpec(config.BENCH_LINK);
  const chosen = new Set(config.BENCH_SCENARIOS);
  chosen.add("A"); // the baseline every ratio is computed against
  const scenarios: Scenario[] = SCENARIOS.filter((s) => chosen.has(s.id));
  const profileIds = PROFILE_IDS.filter((id) => config.BENCH_PROFILES.includes(id));
  const params = { turns: config.BENCH_TURNS, toolOutputBytes: config.BENCH_TOOL_OUTPUT_BYTES };

  const simulatorPort = await freePort();
  const simulatorUrl = `http://127.0.0.1:${simulatorPort}`;
  const upstreams = benchUpstreams(simulatorUrl);
  log("starting the simulator and wrangler dev…");
  let stack: LocalStack | null = null;
  const profiles: Profile[] = [];
  // Registered before the start: a Ctrl-C during it exits, and local-stack's `exit` hook kills wrangler.
  stopOnSignals(() => stack);
  stack = await startLocalStack({
    port: 0,
    simulatorPort,
    verbose: config.BENCH_VERBOSE === "1",
    vars: { UPSTREAMS: upstreams, MODELS: `${HTTP_MODEL},${WS_UPSTREAM_MODEL}` },
    // Others may save files while the bench runs: a reload would drop the loops' sockets.
    snapshot: true,
  });
  try {
    if (!stack.simulator) throw new Error("the local stack started without the simulator");
    const direct: BenchTargets = {
      deltagateBaseUrl: stack.baseUrl,
      deltagateApiKey: LOCAL_DEV_KEY,
      simulatorUrl: stack.simulator.url,
      recorder: stack.simulator.recorder,
    };
    for (const id of profileIds) profiles.push(await startProfile(id, direct, spec));
    log(`Deltagate at ${stack.baseUrl}, simulator at ${stack.simulator.url}`);
    for (const profile of profiles) {
      if (profile.id === "link") {
        log(
          `link profile: ${describeLink(spec)}; client → ${profile.targets.deltagateBaseUrl} / ${profile.targets.simulatorUrl}`,
        );
      }
    }
    const cells: Cell[] = profiles.flatMap((profile) =>
      scenarios.map((scenario) => ({ profile, scenario, run: newScenarioRun(scenario) })),
    );
    const name = (cell: Cell): string => `${cell.profile.id}/${cell.scenario.id}`;
    const started = performance.now();
    // Other processes on a 2-core machine skew everything: keep the load next to the numbers.
    const loadBefore = loadavg()[0] ?? 0;

    for (const cell of cells) {
      assertNotInterrupted();
      try {
        const sample = await runCell(
          cell,
          params,
          `warmup-${cell.profile.id}-${cell.scenario.id}-${randomUUID()}`,
        );
        log(`warm-up ${name(cell)}: ${sample.loopMs.toFixed(0)} ms`);
      } catch (error) {
        cell.run.status = "unavailable";
        cell.run.error = errorText(error);
        log(`warm-up ${name(cell)} failed, scenario unavailable: ${cell.run.error}`);
      }
    }

    for (let round = 0; round < config.BENCH_ROUNDS; round++) {
      const order = cells.map((_, i) => cells[(i + round) % cells.length]!);
      for (const cell of order) {
        assertNotInterrupted();
        if (cell.run.status !== "ok") continue;
        try {
          const nonce = `r${round}-${cell.profile.id}-${cell.scenario.id}-${randomUUID()}`;
          const sample = await runCell(cell, params, nonce);
          cell.run.loops.set(round, sample);
          log(
            `round ${round + 1}/${config.BENCH_ROUNDS} ${name(cell)}: loop ${sample.loopMs.toFixed(0)} ms, ` +
              `${sample.turns.length} turns, ${sample.upstream.requests} upstream requests` +
              (sample.wire ? `, ${sample.wire.connections} client connection(s)` : ""),
          );
        } catch (error) {
          cell.run.status = "failed";
          cell.run.error = `round ${round + 1}: ${errorText(error)}`;
          log(`round ${round + 1} ${name(cell)} failed: ${cell.run.error}`);
        }
      }
    }
    const elapsedS = (performance.now() - started) / 1000;

    assertNotInterrupted();
    const reports: ProfileReport[] = profiles.map((profile) => ({
      id: profile.id,
      label: profile.label,
      link: profile.link,
      scenarios: buildReport(cells.filter((c) => c.profile === profile).map((c) => c.run)),
    }));
    const machine: MachineInfo = {
      node: process.version,
      platform: `${platform()} ${release()} ${arch()}`,
      cpuCount: cpus().length,
      cpuModel: cpus()[0]?.model.trim() ?? "unknown",
      totalMemoryBytes: totalmem(),
      loadAverage1m: { before: loadBefore, after: loadavg()[0] ?? 0 },
    };
    const tables = renderTables(reports);
    console.log(`\n${tables}\n`);
    writeResults(config, spec, machine, reports, tables, upstreams, elapsedS);
    log(`wrote bench/results/latest.json and latest.md (${elapsedS.toFixed(0)} s of loops)`);
    return reports.every((p) => p.scenarios.every((r) => r.status === "ok")) ? 0 : 3;
  } finally {
    await Promise.all(profiles.map((p) => p.close()));
    await stack.stop();
  }
}

/** The summary table, then one section per profile (its table, and the link table if any). */
function renderTables(reports: ProfileReport[]): string {
  const sections = reports.flatMap((p) => {
    const wire = wireTable(p.scenarios);
    return [`## Profile: ${p.label}`, "", markdownTable(p.scenarios), ...(wire ? ["", wire] : []), ""];
  });
  return [
    "Loop time per profile (median over rounds) and its ratio to A of the same profile (< 1 is faster than A):",
    "",
    summaryTable(reports),
    "",
    ...sections,
  ]
    .join("\n")
    .trimEnd();
}

function writeResults(
  config: BenchConfig,
  spec: LinkSpec,
  machine: MachineInfo,
  reports: ProfileReport[],
  tables: string,
  upstreams: string,
  elapsedS: number,
): void {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const date = new Date().toISOString();
  const json = {
    date,
    durationSeconds: Math.round(elapsedS),
    git: gitInfo(),
    machine,
    versions: { wrangler: packageVersion("wrangler"), openai: packageVersion("openai") },
    config: {
      rounds: config.BENCH_ROUNDS,
      turns: config.BENCH_TURNS,
      toolOutputBytes: config.BENCH_TOOL_OUTPUT_BYTES,
      profiles: reports.map((p) => p.id),
      link: { text: config.BENCH_LINK, parsed: spec },
      order:
        "one unmeasured warm-up loop per (profile, scenario), then rounds over every pair with the order rotated by one each round",
    },
    simulator: {
      timing: DEFAULT_TIMING,
      wsCacheSize: DEFAULT_CONNECTION_CACHE_SIZE,
      note: "simulator/timing.ts defaults: first event after overhead + prefill × uncached input tokens; decode paced at decodeTokensPerSecond",
    },
    deltagate: {
      upstreams: JSON.parse(upstreams) as unknown,
      runtime: "wrangler dev (local workerd, Worker snapshot)",
    },
    units: {
      durations: "ms",
      sizes: "bytes (request payload); wire.* bytes: TCP payload on the shaped client link",
    },
    profiles: reports.map((p) => ({ ...p, assumptions: profileNote(p.id, spec) })),
  };
  writeAtomically(join(RESULTS_DIR, "latest.json"), `${JSON.stringify(json, null, 2)}\n`);
  const scenarios = reports[0]?.scenarios ?? [];
  const md = [
    "# Deltagate agent-loop benchmark",
    "",
    `Run: ${date}, ${config.BENCH_ROUNDS} rounds × ${config.BENCH_TURNS} turns per scenario and profile (\`npm run bench\`).`,
    "",
    tables,
    "",
    "Scenarios:",
    "",
    ...scenarios.map((r) => `- **${r.label}**: ${r.description}`),
    "",
    "Profiles:",
    "",
    ...reports.map((p) => `- ${profileNote(p.id, spec)}`),
    "",
    methodNote(config, machine),
    "",
  ].join("\n");
  writeAtomically(join(RESULTS_DIR, "latest.md"), md);
}

/**
 * Stops the stack (wrangler's process group and the simulator) on signals and parent death, then
 * exits with 130. `current` returns the stack once it is started (null before).
 */
function stopOnSignals(current: () => LocalStack | null): void {
  const shutdown = (why: string): void => {
    if (interrupted) return;
    interrupted = true;
    log(`${why}: stopping Deltagate and the simulator…`);
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
