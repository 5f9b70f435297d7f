/**
 * `npm run bench:noise`: the noise floor of the bench's paired per-turn differences on this
 * machine — what "X over Y, paired per turn" reads when X and Y are the same thing. Two identical
 * floor relays (bench/floor/) and two identical Deltagates (default settings, log line on), each
 * its own `wrangler dev`, run the bench's 30-turn WebSocket loop (zero model time, at the
 * runtime's port, as the floor rows of docs/benchmarks.md) in interleaved rounds; it prints each
 * same-kind pair's differences (turn i of a round minus the other's turn i) and, for scale,
 * Deltagate over the floor, paired the same way.
 * A bound on a paired difference (issue #27: p50 ≤ 1.5 ms, p99 ≤ 5 ms) can be shown only where it
 * lies well above the identical pair's figure.
 * Environment: `NOISE_ROUNDS` (default 8), `NOISE_STORE=1` (store:true; default store:false).
 * Invariant: loops run one at a time, in an order that alternates between rounds, so no stack
 * gains from going first.
 */
import { type LocalStack, startLocalStack } from "../scripts/local-stack.ts";
import { runAgentLoop } from "./loop.ts";
import { quantile } from "./metrics.ts";
import { MODEL_TIMES } from "./model-time.ts";
import { startSimulatorProcess } from "./simulator-process.ts";
import { loopNonce } from "./workload.ts";
import { wsTransport } from "./ws-transport.ts";

const rounds = Number(process.env.NOISE_ROUNDS ?? 8);
const store = process.env.NOISE_STORE === "1";
const TURNS = 30;
const MODEL = "noise-ws";
const KEY = "dg-local-dev-key";

const sim = await startSimulatorProcess({ ...MODEL_TIMES.zero, wsPerMessageDeflate: true }, false);
const routes = JSON.stringify([
  { model: MODEL, api: "responses-ws", base_url: `${sim.url}/v1`, api_key_var: "UPSTREAM_API_KEY" },
]);
const common = {
  port: 0,
  simulatorPort: 0,
  upstreamBaseUrl: `${sim.url}/v1`,
  upstreamApiKey: "sim-key",
  verbose: false,
  snapshot: true,
};
const floor = () =>
  startLocalStack({
    ...common,
    vars: { UPSTREAMS: routes, FLOOR_API_KEY: KEY },
    worker: { config: "bench/floor/wrangler.toml", sources: ["bench/floor"] },
  });
const deltagate = () => startLocalStack({ ...common, vars: { UPSTREAMS: routes, MODELS: MODEL } });

const NAMES = ["floor", "floor again", "Deltagate", "Deltagate again"] as const;
type Name = (typeof NAMES)[number];
const stacks: Record<Name, LocalStack> = {
  floor: await floor(),
  "floor again": await floor(),
  Deltagate: await deltagate(),
  "Deltagate again": await deltagate(),
};

/** One 30-turn loop through `stack`'s runtime port; the latency of each turn, ms. */
async function loop(stack: LocalStack, label: string): Promise<number[]> {
  const tag = `${label.replaceAll(" ", "-")}-${Date.now()}`;
  const origin = await stack.runtimeOrigin();
  const transport = wsTransport({
    url: `${origin.replace(/^http/, "ws")}/v1/responses`,
    headers: { authorization: `Bearer ${KEY}`, "session-id": `noise-${tag}` },
    perMessageDeflate: true,
    model: MODEL,
    store,
    promptCacheKey: `noise-${tag}`,
    dropEvery: 0,
    resume: "full",
    turnTimeoutMs: 30_000,
    connectTimeoutMs: 10_000,
  });
  await transport.open();
  const samples = await runAgentLoop(transport, { turns: TURNS, nonce: loopNonce(tag) });
  await transport.close();
  return samples.map((sample) => sample.latencyMs);
}

try {
  const latency = new Map<Name, number[][]>(NAMES.map((name) => [name, []]));
  for (const name of NAMES) await loop(stacks[name], `warm-${name}`);
  for (let round = 1; round <= rounds; round++) {
    const order = round % 2 === 1 ? NAMES : [...NAMES].reverse();
    for (const name of order) latency.get(name)?.push(await loop(stacks[name], `${round}-${name}`));
  }
  const paired = (a: Name, b: Name): number[] => {
    const other = latency.get(b) ?? [];
    return (latency.get(a) ?? []).flatMap((turns, round) =>
      turns.flatMap((ms, i) => {
        const o = other[round]?.[i];
        return o === undefined ? [] : [ms - o];
      }),
    );
  };
  const f = (ms: number) => `${ms >= 0 ? "+" : ""}${ms.toFixed(2)}`;
  console.log(`store:${store}, ${rounds} rounds × ${TURNS} turns, paired per turn (ms):`);
  for (const [a, b] of [
    ["floor again", "floor"],
    ["Deltagate again", "Deltagate"],
    ["Deltagate", "floor"],
    ["Deltagate again", "floor again"],
  ] as const) {
    const d = paired(a, b);
    console.log(
      `  ${a} over ${b}: ${d.length} pairs, p50 ${f(quantile(d, 0.5))}, p90 ${f(quantile(d, 0.9))}, p99 ${f(quantile(d, 0.99))}`,
    );
  }
} finally {
  await Promise.all([...Object.values(stacks).map((stack) => stack.stop()), sim.close()]);
}
