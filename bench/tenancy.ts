/**
 * `npm run bench:tenancy`: tenancy under load (issue #19), against the local stack (`wrangler dev`
 * + the simulator, scripts/local-stack.ts; tenants made through the admin API). Clients connect to
 * the runtime itself, past `wrangler dev`'s proxy (scripts/runtime-origin.ts: a deployment has no
 * such hop, and the proxy relays every connection's frames through one Durable Object); the flood
 * is measured through the proxy as well, in rows of its own.
 * - **noisy tenant**: 10 tenants, each one WebSocket session running sequential turns at
 *   `BENCH_TENANT_RATE` turns/s (default 2); one of them runs 10 sessions at that rate (10× the
 *   others' load) against its `turns_per_minute` limit (`BENCH_NOISY_LIMIT`, default 2 × 60 ×
 *   rate: twice one other tenant's load, a fifth of its own). The limit counts in fixed epoch
 *   minutes, so a phase shorter than a minute spans at most two windows and the noisy tenant is
 *   admitted at most twice the limit: at the defaults ≤ 480 of its ~600 turns, ≥ 120 429s. The
 *   others' turn p50/p99 is compared with a run without the noisy tenant; the noisy one must see
 *   429 `rate_limit_exceeded` and no other error.
 * - **flood**: a quiet session's turn p50/p99 while another socket sends `BENCH_FLOOD_FRAMES`
 *   (default 10,000) tiny frames at once (from a process of its own, bench/tenancy-flooder.ts),
 *   against the same session alone — one row per shape of frame (issue #23: default-lane creates,
 *   `stream_id` creates, creates whose `type` is not first, unknown event types) at the runtime,
 *   and the default-lane flood through the proxy.
 * `BENCH_SECONDS` (default 30) is each tenant phase's length; a flood phase lasts a third of it, at
 * least 3 s but never longer than a tenant phase (10 s at the default). Every session runs at least
 * one turn however short its phase. `BENCH_SECONDS=1 BENCH_FLOOD_FRAMES=500 BENCH_ROUNDS=1
 * BENCH_NOISY_LIMIT=4` is the smoke run (test/node/bench-tenancy-smoke.test.ts); `BENCH_PHASES=flood`
 * (or `tenants`) runs one half. `BENCH_ROUNDS` (default 2)
 * repeats both comparisons, their sides interleaved, so the rounds' spread shows the run's noise.
 * Results are printed as a table and written to bench/results/tenancy-latest.json (the folder:
 * `BENCH_RESULTS_DIR`).
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import WebSocket from "ws";
import { LOCAL_DEV_KEY, REPO_ROOT, startLocalStack } from "../scripts/local-stack.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const RATE = Number(process.env.BENCH_TENANT_RATE ?? 2);
const NOISY_LIMIT = Number(process.env.BENCH_NOISY_LIMIT ?? Math.round(2 * 60 * RATE));
const FLOOD_FRAMES = Number(process.env.BENCH_FLOOD_FRAMES ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const PHASES = new Set((process.env.BENCH_PHASES ?? "tenants,flood").split(","));
/** A flood phase: a third of a tenant phase, at least 3 s, never longer than a tenant phase. */
const FLOOD_SECONDS = Math.min(SECONDS, Math.max(3, SECONDS / 3));
const TENANTS = 10;
const MODEL = "deltagate-sim";

interface Tally {
  latencies: number[];
  completed: number;
  rateLimited: number;
  otherErrors: string[];
}

const tally = (): Tally => ({ latencies: [], completed: 0, rateLimited: 0, otherErrors: [] });

function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const stack = await startLocalStack({
  port: 0,
  simulatorPort: 0,
  verbose: false,
  snapshot: true,
  vars: { TURN_LOG: "0" },
});
/** Sockets go to the runtime itself (scripts/runtime-origin.ts), as in a deployment. */
const runtimeWsUrl = `${(await stack.runtimeOrigin()).replace("http", "ws")}/v1/responses`;
/** …and, for the flood's second pair of rows, through `wrangler dev`'s proxy. */
const proxyWsUrl = `${stack.origin.replace("http", "ws")}/v1/responses`;

async function adminCall(path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${stack.origin}/admin/v1${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.secrets.ADMIN_API_KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`admin ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

function open(key: string, session: string, url = runtimeWsUrl): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${key}`, "session-id": session } });
    ws.once("open", () => resolve(ws));
    ws.once("error", reject);
  });
}

/** One turn: resolves with its latency and how it ended. */
function turn(ws: WebSocket, input: string): Promise<{ ms: number; outcome: string }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const onMessage = (data: WebSocket.RawData) => {
      const event = JSON.parse(String(data)) as { type: string; error?: { code?: string } };
      let outcome: string | null = null;
      if (event.type === "response.completed") outcome = "completed";
      else if (event.type === "error") outcome = event.error?.code ?? "error";
      else if (event.type === "response.failed" || event.type === "response.incomplete") outcome = event.type;
      if (outcome === null) return;
      ws.off("message", onMessage);
      resolve({ ms: performance.now() - started, outcome });
    };
    ws.on("message", onMessage);
    ws.send(JSON.stringify({ type: "response.create", model: MODEL, input, store: false }));
  });
}

/**
 * Sequential turns at `rate` per second until `until`, and always at least one: a phase's sockets
 * open one after the other before its turns start, and on a busy machine a short phase can be over
 * before the last one opens, which must not leave a session with no turn to report.
 */
async function loop(ws: WebSocket, rate: number, until: number, into: Tally): Promise<void> {
  const period = 1000 / rate;
  do {
    const next = performance.now() + period;
    const { ms, outcome } = await turn(ws, "bench [sim:tokens=20] [sim:tools=0]");
    if (outcome === "completed") {
      into.completed++;
      into.latencies.push(ms);
    } else if (outcome === "rate_limit_exceeded") into.rateLimited++;
    else into.otherErrors.push(outcome);
    const wait = next - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  } while (performance.now() < until);
}

async function tenantsPhase(withNoisy: boolean, keys: string[]): Promise<{ quiet: Tally; noisy: Tally }> {
  const quiet = tally();
  const noisy = tally();
  const sockets: WebSocket[] = [];
  const until = performance.now() + SECONDS * 1000;
  const runs: Promise<void>[] = [];
  for (let t = 1; t < TENANTS; t++) {
    const ws = await open(keys[t]!, `quiet-${t}-${withNoisy}-${Date.now()}`);
    sockets.push(ws);
    runs.push(loop(ws, RATE, until, quiet));
  }
  if (withNoisy) {
    for (let s = 0; s < 10; s++) {
      const ws = await open(keys[0]!, `noisy-${s}-${Date.now()}`);
      sockets.push(ws);
      runs.push(loop(ws, RATE, until, noisy));
    }
  }
  await Promise.all(runs);
  for (const ws of sockets) ws.close();
  return { quiet, noisy };
}

/** The flood's shapes of frame (bench/tenancy-flooder.ts), with their rows' labels. */
const FLOOD_SHAPES = [
  ["default", "default-lane creates"],
  ["stream_id", "stream_id creates"],
  ["reordered", "creates, type not first"],
  ["unknown", "unknown event types"],
] as const;
type FloodShape = (typeof FLOOD_SHAPES)[number][0];

/** The flooding client, in its own process (bench/tenancy-flooder.ts); resolves once it is connected. */
async function startFlooder(url: string, shape: FloodShape): Promise<{ go(): void; done: Promise<string> }> {
  const child = spawn(
    process.execPath,
    [
      join(REPO_ROOT, "bench/tenancy-flooder.ts"),
      url,
      LOCAL_DEV_KEY,
      `flooder-${Date.now()}`,
      String(FLOOD_FRAMES),
      shape,
    ],
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  const lines = createInterface({ input: child.stdout });
  const iterator = lines[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.value !== "open") throw new Error(`flooder did not connect: ${String(first.value)}`);
  const done = (async () => String((await iterator.next()).value ?? ""))();
  return { go: () => child.stdin.write("go\n"), done };
}

/** A quiet session's turns, alone or beside a socket flooding frames of `shape`, both connected at `url`. */
async function floodPhase(
  shape: FloodShape | null,
  url: string,
): Promise<{ quiet: Tally; flooder: string | null }> {
  const quiet = tally();
  const ws = await open(LOCAL_DEV_KEY, `flood-quiet-${shape}-${Date.now()}`, url);
  const flooder = shape ? await startFlooder(url, shape) : null;
  if (flooder) setTimeout(() => flooder.go(), 200);
  await loop(ws, RATE * 5, performance.now() + FLOOD_SECONDS * 1000, quiet);
  ws.close();
  return { quiet, flooder: flooder ? await flooder.done : null };
}

const row = (label: string, t: Tally) => ({
  phase: label,
  turns: t.completed,
  p50_ms: Number(percentile(t.latencies, 50).toFixed(1)),
  p99_ms: Number(percentile(t.latencies, 99).toFixed(1)),
  rate_limited: t.rateLimited,
  other_errors: t.otherErrors.length,
});

try {
  const keys: string[] = [];
  const stamp = Date.now();
  for (let t = 0; t < TENANTS; t++) {
    const id = `bench-${stamp}-${t}`;
    await adminCall("/tenants", { id, ...(t === 0 ? { limits: { turns_per_minute: NOISY_LIMIT } } : {}) });
    keys.push(String((await adminCall(`/tenants/${id}/keys`, { name: "bench" })).key));
  }
  const rows: ReturnType<typeof row>[] = [];
  const errors: { noisy: string[]; quiet: string[] } = { noisy: [], quiet: [] };
  const flooder: Record<string, unknown> = {};
  // Rounds interleave each comparison's two sides, so the spread between rounds of the same side
  // is the run's own noise, measured beside the difference it judges.
  for (let round = 1; round <= ROUNDS; round++) {
    const tag = ROUNDS > 1 ? ` [round ${round}]` : "";
    if (PHASES.has("tenants")) {
      const baseline = await tenantsPhase(false, keys);
      const contended = await tenantsPhase(true, keys);
      rows.push(
        row(`9 tenants, no noisy tenant${tag}`, baseline.quiet),
        row(`9 tenants, with the noisy one${tag}`, contended.quiet),
        row(`noisy tenant (10×, limit ${NOISY_LIMIT}/min)${tag}`, contended.noisy),
      );
      errors.noisy.push(...contended.noisy.otherErrors);
      errors.quiet.push(...baseline.quiet.otherErrors, ...contended.quiet.otherErrors);
    }
    if (PHASES.has("flood")) {
      for (const [via, url, shapes] of [
        ["", runtimeWsUrl, FLOOD_SHAPES],
        [" (through wrangler dev's proxy)", proxyWsUrl, FLOOD_SHAPES.slice(0, 1)],
      ] as const) {
        rows.push(row(`quiet session alone${via}${tag}`, (await floodPhase(null, url)).quiet));
        for (const [shape, label] of shapes) {
          const flooded = await floodPhase(shape, url);
          rows.push(
            row(`quiet session, ${FLOOD_FRAMES} ${label} flooding another socket${via}${tag}`, flooded.quiet),
          );
          if (via === "" && flooded.flooder) flooder[shape] = JSON.parse(flooded.flooder);
        }
      }
    }
  }
  console.table(rows);
  for (const [shape, replies] of Object.entries(flooder))
    console.log(`flooder (${shape}):`, JSON.stringify(replies));
  const out = process.env.BENCH_RESULTS_DIR ?? join(REPO_ROOT, "bench/results");
  mkdirSync(out, { recursive: true });
  writeFileSync(
    join(out, "tenancy-latest.json"),
    `${JSON.stringify({ at: new Date().toISOString(), seconds: SECONDS, rate: RATE, rows, flooder, rounds: ROUNDS, noisyErrors: errors.noisy.slice(0, 20), quietErrors: errors.quiet.slice(0, 20) }, null, 2)}\n`,
  );
} finally {
  await stack.stop();
}
