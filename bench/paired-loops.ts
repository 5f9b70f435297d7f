/**
 * Interleaved, paired loops over several local stacks at once: what `npm run bench:noise`
 * (noise.ts) and `npm run bench:breakdown` (breakdown.ts) share. Each stack is its own
 * `wrangler dev` (scripts/local-stack.ts) in front of one simulator process; a round runs the
 * bench's 30-turn WebSocket loop (zero model time, at the runtime's port, as the floor rows of
 * docs/benchmarks.md) once through every stack, one loop at a time; a "paired" difference is turn
 * i of a round through one stack minus turn i of the same round through another.
 * Invariant: loops run one at a time, in an order that alternates between rounds (odd rounds in
 * the given order, even ones reversed), so no stack gains from going first; every stack is
 * stopped, and the simulator closed, when `runPairedLoops` returns or throws, or a signal
 * (SIGINT, SIGTERM, SIGHUP) ends the process during it.
 */
import { constants } from "node:os";
import { type LocalStack, type LocalStackOptions, startLocalStack } from "../scripts/local-stack.ts";
import { runAgentLoop } from "./loop.ts";
import { quantile, type TurnSample } from "./metrics.ts";
import { MODEL_TIMES } from "./model-time.ts";
import { stackCpuMs } from "./proc-stats.ts";
import { pairedTurnDifferences, type TurnLatencies } from "./report.ts";
import { startSimulatorProcess } from "./simulator-process.ts";
import { loopNonce } from "./workload.ts";
import { wsTransport } from "./ws-transport.ts";

const TURNS = 30;
/** The signals that end a run early (and its stacks with it). */
const EXIT_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
/** The one model the stacks route, to the simulator's Responses WebSocket. */
export const PAIRED_MODEL = "paired-ws";
/** The API key every stack accepts (Deltagate's local development key; the floor's `FLOOR_API_KEY`). */
export const PAIRED_KEY = "dg-local-dev-key";

/** How to start one stack, given the simulator's routing table (`UPSTREAMS`). */
export type StackStarter = (routes: string, common: Omit<LocalStackOptions, "vars">) => Promise<LocalStack>;

/** The floor relay (bench/floor/) with `vars` added. */
export const floorStack =
  (vars: Record<string, string> = {}): StackStarter =>
  (routes, common) =>
    startLocalStack({
      ...common,
      vars: { UPSTREAMS: routes, FLOOR_API_KEY: PAIRED_KEY, ...vars },
      worker: { config: "bench/floor/wrangler.toml", sources: ["bench/floor"] },
    });

/** Deltagate with its defaults, `vars` added, and wrangler's devtools inspector if `inspectorPort` is set. */
export const deltagateStack =
  (vars: Record<string, string> = {}, stack: Pick<LocalStackOptions, "inspectorPort"> = {}): StackStarter =>
  (routes, common) =>
    startLocalStack({ ...common, ...stack, vars: { UPSTREAMS: routes, MODELS: PAIRED_MODEL, ...vars } });

/** What the rounds measured through one stack. */
export interface StackSamples {
  /** By round, its loop's turns (paired across stacks by report.ts `pairedTurnDifferences`). */
  loops: Map<number, TurnLatencies>;
  /** Per round, the runtime's CPU per turn (its workerd less wrangler dev's proxy), ms; null off Linux. */
  runtimeCpuMsPerTurn: (number | null)[];
}

/** The rounds' samples of each stack, by name. */
export interface PairedSamples<Name extends string> {
  of(name: Name): StackSamples;
}

/** The runtime's CPU so far (every workerd of the stack less its proxy), ms; null if unreadable. */
function runtimeCpuMs(stack: LocalStack): number | null {
  if (stack.processGroup === null) return null;
  const cpu = stackCpuMs(stack.processGroup, Number(new URL(stack.origin).port));
  return cpu === null ? null : cpu.workerdMs - (cpu.proxyMs ?? 0);
}

/** One 30-turn loop through `stack`'s runtime port: its turns and the runtime's CPU per turn (ms). */
async function loop(
  stack: LocalStack,
  label: string,
  store: boolean,
): Promise<{ turns: TurnSample[]; cpu: number | null }> {
  const tag = `${label.replaceAll(" ", "-")}-${Date.now()}`;
  const origin = await stack.runtimeOrigin();
  const transport = wsTransport({
    url: `${origin.replace(/^http/, "ws")}/v1/responses`,
    headers: { authorization: `Bearer ${PAIRED_KEY}`, "session-id": `paired-${tag}` },
    perMessageDeflate: true,
    model: PAIRED_MODEL,
    store,
    promptCacheKey: `paired-${tag}`,
    dropEvery: 0,
    resume: "full",
    turnTimeoutMs: 30_000,
    connectTimeoutMs: 10_000,
  });
  await transport.open();
  const before = runtimeCpuMs(stack);
  const turns = await runAgentLoop(transport, { turns: TURNS, nonce: loopNonce(tag) });
  const after = runtimeCpuMs(stack);
  await transport.close();
  return { turns, cpu: before === null || after === null ? null : (after - before) / TURNS };
}

/**
 * Starts every stack in `starters` (one at a time: starts are CPU-bound), runs one warm-up loop
 * through each, then `rounds` interleaved rounds in the order given, and stops them all.
 */
export async function runPairedLoops<Name extends string>(
  starters: ReadonlyArray<readonly [Name, StackStarter]>,
  options: { rounds: number; store: boolean },
): Promise<PairedSamples<Name>> {
  const sim = await startSimulatorProcess({ ...MODEL_TIMES.zero, wsPerMessageDeflate: true }, false);
  const routes = JSON.stringify([
    { model: PAIRED_MODEL, api: "responses-ws", base_url: `${sim.url}/v1`, api_key_var: "UPSTREAM_API_KEY" },
  ]);
  const common = {
    port: 0,
    simulatorPort: 0,
    upstreamBaseUrl: `${sim.url}/v1`,
    upstreamApiKey: "sim-key",
    verbose: false,
    snapshot: true,
  };
  const names = starters.map(([name]) => name);
  const stacks = new Map<Name, LocalStack>();
  // Ctrl-C (SIGINT), SIGTERM or SIGHUP must not leave the stacks running: each is its own process
  // group, which the signal does not reach, and Node runs no `exit` hook when a signal ends it.
  // Exiting runs the hooks of local-stack.ts and simulator-process.ts, which kill what they started.
  const exitOnSignal = (signal: NodeJS.Signals) => process.exit(128 + (constants.signals[signal] ?? 0));
  for (const signal of EXIT_SIGNALS) process.once(signal, exitOnSignal);
  try {
    for (const [name, start] of starters) stacks.set(name, await start(routes, common));
    const samples = new Map<Name, StackSamples>(
      names.map((name) => [name, { loops: new Map(), runtimeCpuMsPerTurn: [] }]),
    );
    const of = (name: Name): StackSamples => {
      const found = samples.get(name);
      if (!found) throw new Error(`no samples of ${name}`);
      return found;
    };
    const through = (name: Name): LocalStack => {
      const stack = stacks.get(name);
      if (!stack) throw new Error(`no stack ${name}`);
      return stack;
    };
    for (const name of names) await loop(through(name), `warm-${name}`, options.store);
    for (let round = 1; round <= options.rounds; round++) {
      const order = round % 2 === 1 ? names : [...names].reverse();
      for (const name of order) {
        const { turns, cpu } = await loop(through(name), `${round}-${name}`, options.store);
        of(name).loops.set(round, { turns });
        of(name).runtimeCpuMsPerTurn.push(cpu);
      }
    }
    return { of };
  } finally {
    for (const signal of EXIT_SIGNALS) process.off(signal, exitOnSignal);
    await Promise.all([...[...stacks.values()].map((stack) => stack.stop()), sim.close()]);
  }
}

/**
 * A stack's runtime CPU per turn over all its rounds (total over total turns: one loop's reading
 * is whole clock ticks, 10 ms in 30 turns, too coarse for a median of loops), ms; null when unread.
 */
export function cpuPerTurn(samples: StackSamples): number | null {
  const known = samples.runtimeCpuMsPerTurn.filter((ms): ms is number => ms !== null);
  return known.length === 0 ? null : known.reduce((sum, ms) => sum + ms, 0) / known.length;
}

/** `+1.23`: a signed difference, ms. */
export const signed = (ms: number): string => `${ms >= 0 ? "+" : ""}${ms.toFixed(2)}`;

/** Turn i of each round through `a` minus turn i of the same round through `b`, ms. */
export function pairedDiffs(a: StackSamples, b: StackSamples): number[] {
  return pairedTurnDifferences(a.loops, b.loops);
}

/** Every turn's latency through a stack, ms. */
const latencies = (samples: StackSamples): number[] =>
  [...samples.loops.values()].flatMap((loop) => loop.turns.map((turn) => turn.latencyMs));

/**
 * The q-quantile of every turn through `a` minus that of every turn through `b`, ms: how much a
 * stack moves a quantile of turn latency, where `pairedDiffs`'s quantile is a quantile of the
 * differences, whose tail is either side's outliers (each side's spikes land in it apart).
 */
export function quantileGap(a: StackSamples, b: StackSamples, q: number): number {
  return quantile(latencies(a), q) - quantile(latencies(b), q);
}

/** "p50 …, p99 …" of `a`'s turns minus the same quantiles of `b`'s (`quantileGap`). */
export function describeGaps(a: StackSamples, b: StackSamples): string {
  return `p50 ${signed(quantileGap(a, b, 0.5))}, p99 ${signed(quantileGap(a, b, 0.99))}`;
}

/** "N pairs, p50 …, p90 …, p99 …" of paired differences. */
export function describeDiffs(diffs: number[]): string {
  return `${diffs.length} pairs, p50 ${signed(quantile(diffs, 0.5))}, p90 ${signed(quantile(diffs, 0.9))}, p99 ${signed(quantile(diffs, 0.99))}`;
}

/** The name every report gives the floor relay's stack (`floorStack`). */
const FLOOR = "floor";

/** A stack's runtime CPU per turn minus the floor's, ms; null when either is unread. */
export function cpuOverFloor<Name extends string>(
  samples: PairedSamples<Name | typeof FLOOR>,
  name: Name,
): number | null {
  const cpu = cpuPerTurn(samples.of(name));
  const floor = cpuPerTurn(samples.of(FLOOR));
  return cpu === null || floor === null ? null : cpu - floor;
}

/**
 * Prints what `bench:breakdown` and `bench:against` report of each stack against the floor: the
 * run's shape, the floor's runtime CPU per turn, then for each of `names` its runtime CPU per turn
 * (and over the floor's), its latency over the floor paired per turn, and its quantiles over the
 * floor's; `more(name)` adds lines of the script's own under a stack.
 */
export function reportOverFloor<Name extends string>(
  samples: PairedSamples<Name | typeof FLOOR>,
  names: readonly Name[],
  options: { rounds: number; store: boolean },
  more: (name: Name) => string[] = () => [],
): void {
  const floorCpu = cpuPerTurn(samples.of(FLOOR));
  const ms = (value: number | null): string => (value === null ? "?" : `${value.toFixed(2)} ms/turn`);
  console.log(
    `store:${options.store}, ${options.rounds} rounds × 30 turns, paired per turn (ms); runtime CPU per turn:`,
  );
  console.log(`  ${FLOOR}: ${ms(floorCpu)}`);
  for (const name of names) {
    const over = cpuOverFloor(samples, name);
    console.log(
      `  ${name}: ${ms(cpuPerTurn(samples.of(name)))}${over === null ? "" : ` (${signed(over)} over the floor)`}`,
    );
    console.log(`    over the floor: ${describeDiffs(pairedDiffs(samples.of(name), samples.of(FLOOR)))}`);
    console.log(`    its quantiles over the floor's: ${describeGaps(samples.of(name), samples.of(FLOOR))}`);
    for (const line of more(name)) console.log(`    ${line}`);
  }
}
