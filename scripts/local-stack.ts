/**
 * Starts Deltagate locally, as `npm start` and the end-to-end tests run it: the reference
 * simulator (unless a real upstream is configured) beside `wrangler dev` (scripts/wrangler-dev.ts:
 * wrangler's dev server with no devtools inspector unless `inspectorPort` asks for one).
 * Owns the lifetimes of both: `stop()` ends wrangler's whole process group (wrangler, its bundler
 * and every `workerd`) and the simulator, and a process `exit` hook does the same if the caller
 * never got to `stop()`, so no orphaned `workerd` keeps a port.
 * Invariant: the Worker's configuration comes only from the generated env file. Naming it
 * (`envFiles`, the `--env-file` of `wrangler dev`) makes wrangler skip `.dev.vars`/`.env`, and
 * the child environment pins `CLOUDFLARE_LOAD_DEV_VARS_FROM_DOT_ENV=true` and
 * `CLOUDFLARE_INCLUDE_PROCESS_ENV=false`, so
 * neither a developer's `.dev.vars` nor their shell variables can override it
 * (wrangler 4.164 `getVarsForDev`; https://developers.cloudflare.com/workers/configuration/environment-variables/).
 * Closed by default: its secrets (the root secret `DELTAGATE_SECRET`, the admin key) come from
 * the file beside its state (local-secrets.ts), never from a constant;
 * `CORS_ALLOWED_ORIGINS` is its own origins (`http://127.0.0.1:PORT`, `http://localhost:PORT`)
 * unless the caller sets it, so a page on another origin gets no CORS answer and a 403 for
 * anything it sends, a WebSocket upgrade included.
 * Tests run a frozen snapshot of the Worker (`snapshot: true`) so a file saved mid-run cannot make
 * wrangler reload and drop their sockets; `npm start` keeps wrangler's live reload.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type RunningSimulator, startSimulator } from "../simulator/server.ts";
import { type LocalSecrets, localSecrets } from "./local-secrets.ts";
import { runtimeOrigin } from "./runtime-origin.ts";
import type { WranglerDevOptions } from "./wrangler-dev.ts";

/**
 * The local development API key (documented in .dev.vars.example and the README's "Run it"). A published
 * value on purpose (`npm run demo`, the README's curl lines): it reaches only processes on this
 * machine, since the stack listens on 127.0.0.1 and refuses every other origin (see below).
 */
export const LOCAL_DEV_KEY = "dg-local-dev-key";

/** The repository root (this file lives in `scripts/`). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** How long `startLocalStack` waits for `GET /healthz`, in ms (a cold wrangler start takes 5–15 s). */
const HEALTH_TIMEOUT_MS = 90_000;
/** How long `stop()` waits for wrangler to exit after SIGTERM before it sends SIGKILL, in ms. */
const STOP_GRACE_MS = 5_000;
/** Bytes of wrangler output kept for error messages. */
const LOG_TAIL_BYTES = 16_384;

/** Options of `startLocalStack`. */
export interface LocalStackOptions {
  /** Port for wrangler dev (0 = pick a free one). */
  port: number;
  /** Port for the simulator (0 = pick a free one); ignored when `upstreamBaseUrl` is set. */
  simulatorPort: number;
  /** A real upstream (`…/v1`); when set, no simulator is started. */
  upstreamBaseUrl?: string | undefined;
  upstreamApiKey?: string | undefined;
  /** `key:tenant,…`; defaults to the local dev key. */
  apiKeys?: string | undefined;
  /**
   * Extra variables for the Worker (they win over the defaults above). `{SIM}` in a value stands
   * for the simulator's origin (`http://127.0.0.1:<port>`), known only once it listens: e.g. an
   * `UPSTREAMS` route with `"base_url": "{SIM}/v1beta"`.
   */
  vars?: Record<string, string>;
  /** Print wrangler's and the simulator's output (otherwise only the last 16 KB are kept). */
  verbose: boolean;
  /**
   * Directory for wrangler's local Durable Object storage (`--persist-to`), and of the local
   * secrets that go with it (local-secrets.ts); default: a temp dir, so fresh secrets.
   */
  persistTo?: string;
  /**
   * Run a frozen copy of the Worker (see `snapshotWorker`) instead of the live tree. `wrangler dev`
   * rebuilds and restarts workerd whenever a source file changes, which drops every open
   * WebSocket; tests must not fail because someone saved a file mid-run. Default false (`npm
   * start` keeps live reload).
   */
  snapshot?: boolean;
  /**
   * Another Worker to run in Deltagate's place (the benchmark's floor relay, bench/floor/): its
   * wrangler configuration and what a snapshot of it copies, as paths from the repository's root.
   * Default: Deltagate (`DELTAGATE_WORKER`). It gets the same env file and health check (`GET /healthz`).
   */
  worker?: WorkerSources;
  /**
   * Attach wrangler's devtools inspector on this port (0: any free one, picked by the OS as it
   * binds, so two stacks starting at once cannot race for one), for a debugger or a CPU
   * profile. Default: none, as in a deployment; with one, every `console.log` of the Worker costs
   * a devtools event (scripts/wrangler-dev.ts says why that matters).
   */
  inspectorPort?: number;
}

/** Where a Worker's configuration and sources are, from the repository's root. */
export interface WorkerSources {
  config: string;
  sources: readonly string[];
}

/** A running local stack. */
export interface LocalStack {
  /** `http://127.0.0.1:PORT/v1`: the base URL clients use. */
  baseUrl: string;
  /** `http://127.0.0.1:PORT`: the Worker's origin. */
  origin: string;
  /** The embedded simulator, or null when a real upstream is configured. */
  simulator: RunningSimulator | null;
  /** The model ids the Worker advertises (`MODELS`), in order. */
  models: string[];
  /** The stack's local secrets (the Worker's settings of those names). */
  secrets: LocalSecrets;
  /** Its Durable Object state directory (where its secrets file is). */
  stateDir: string;
  /** The last output of wrangler (stdout and stderr interleaved), for diagnostics. */
  output(): string;
  /**
   * Wrangler's process group (wrangler, its bundler and every `workerd`; the id of the process
   * started), for per-stack accounting (bench/proc-stats.ts); null if it could not be started.
   */
  processGroup: number | null;
  /**
   * The origin of the runtime itself, behind wrangler's dev proxy (runtime-origin.ts): what a
   * benchmark of one connection's effect on another measures, since a deployment has no proxy.
   */
  runtimeOrigin(): Promise<string>;
  /** Stops wrangler (its whole process group) and the simulator; idempotent. */
  stop(): Promise<void>;
  /**
   * Kills wrangler's whole process group at once (SIGKILL, no grace), as a crash would: nothing in
   * the Worker gets to finish. The state under `persistTo` stays for the next start. Then the same
   * as `stop()` (idempotent with it).
   */
  kill(): Promise<void>;
}

/**
 * Where `freePort` picks: below the range the OS hands ports out of by itself (a listen on port 0,
 * an outgoing connection's local port: 32768–60999 on Linux, 49152–65535 on macOS), and above the
 * usual fixed ports of local services (wrangler's 8787, its inspector's 9229).
 * https://www.kernel.org/doc/html/latest/networking/ip-sysctl.html (`ip_local_port_range`)
 */
const PICK_FROM = 20_000;
const PICK_BELOW = 32_768;

/** Whether nothing listens on 127.0.0.1:`port` (checked by listening on it, then closing). */
function isFree(port: number): Promise<boolean> {
  return new Promise((resolveFree) => {
    const server = createServer();
    server.once("error", () => resolveFree(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolveFree(true)));
  });
}

/**
 * A free TCP port on 127.0.0.1, released before it is returned, for a server that binds it later
 * (wrangler binds its port seconds after it starts, once it has bundled the Worker). Picked at
 * random below the OS's own range: a port the OS picked would be the OS's to hand out again to
 * any process meanwhile, and a `wrangler dev` starting beside other stacks found its port taken
 * ("Address already in use").
 * @throws {Error} when 50 random ports of the range were all taken.
 */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 50; tries++) {
    const port = PICK_FROM + Math.floor(Math.random() * (PICK_BELOW - PICK_FROM));
    if (await isFree(port)) return port;
  }
  throw new Error(`No free port on 127.0.0.1 between ${PICK_FROM} and ${PICK_BELOW - 1}.`);
}

/**
 * Fails early when `port` is taken on 127.0.0.1: otherwise a stack left running elsewhere (say,
 * another `npm start`) would answer our health check and we would report success for it.
 * @throws {Error} naming the port and the variable that changes it.
 */
async function assertPortFree(port: number, what: string, variable: string): Promise<void> {
  await new Promise<void>((resolveFree, reject) => {
    const server = createServer();
    server.once("error", (error: NodeJS.ErrnoException) => {
      reject(
        new Error(
          error.code === "EADDRINUSE"
            ? `Port ${port} (${what}) is already in use, maybe by another \`npm start\`; stop it or set ${variable}.`
            : `Cannot listen on 127.0.0.1:${port} (${what}): ${error.message}`,
        ),
      );
    });
    server.listen(port, "127.0.0.1", () => server.close(() => resolveFree()));
  });
}

/**
 * Serializes variables as a dotenv file wrangler reads literally: single-quoted values (dotenv
 * leaves them as they are) with `$` escaped as `\$` (wrangler runs dotenv-expand over them).
 * A JSON value written over several lines (`UPSTREAMS`, `SAFETY`, `PRICES` as a shell user writes
 * them) is written on one line: the same JSON to the Worker, which parses it.
 * @throws {Error} naming the variable (never its value) when a name or value cannot be written so.
 */
export function toEnvFile(vars: Record<string, string>): string {
  return Object.entries(vars)
    .map(([name, written]) => {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`Invalid variable name: ${name}`);
      const value = /[\r\n]/.test(written) ? (oneLineJson(written) ?? written) : written;
      if (/['\r\n]/.test(value)) {
        throw new Error(
          `The value of ${name} contains a quote or a line break, which the env file cannot carry.`,
        );
      }
      return `${name}='${value.replaceAll("$", "\\$")}'`;
    })
    .join("\n")
    .concat("\n");
}

/** `text` as compact JSON when it is JSON, else null. */
function oneLineJson(text: string): string | null {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return null;
  }
}

/** What `wrangler dev` needs of the tree to build Deltagate (paths relative to the repo root). */
export const DELTAGATE_WORKER: WorkerSources = {
  config: "wrangler.toml",
  sources: ["wrangler.toml", "package.json", "tsconfig.json", "src", "migrations", "public"],
};

/**
 * Copies a Worker's sources into a fresh directory under `.wrangler/snapshots/` (inside the
 * repo, so esbuild still resolves packages from its node_modules; `.wrangler/` is ignored by git
 * and Biome), each at its path from the repository's root.
 * @returns the snapshot's wrangler configuration path and the directory to remove afterwards.
 */
export function snapshotWorker(worker: WorkerSources = DELTAGATE_WORKER): {
  configPath: string;
  dir: string;
} {
  const parent = join(REPO_ROOT, ".wrangler", "snapshots");
  mkdirSync(parent, { recursive: true });
  const dir = mkdtempSync(join(parent, "worker-"));
  for (const source of worker.sources) {
    cpSync(join(REPO_ROOT, source), join(dir, source), { recursive: true });
  }
  return { configPath: join(dir, worker.config), dir };
}

async function waitForHealth(
  origin: string,
  child: ChildProcess,
  timeoutMs: number,
  output: () => string,
  spawnError: () => Error | null,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const failed = spawnError();
    if (failed) throw new Error(`wrangler dev could not be started: ${failed.message}`);
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `wrangler dev exited (${child.exitCode ?? child.signalCode}) before it was healthy:\n${output()}`,
      );
    }
    try {
      const res = await fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(2_000) });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`Deltagate did not become healthy at ${origin} within ${timeoutMs} ms:\n${output()}`);
}

/** Sends `signal` to a whole process group; a group that is already gone is fine. */
function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: every member has exited
  }
}

/**
 * The environment of `wrangler dev`: the caller's, with wrangler tuned like production. The Worker
 * reads nothing from it (see the invariant above); wrangler itself does:
 * - `X_LOCAL_OBSERVABILITY=false`: no local observability. By default wrangler 4.164 attaches a
 *   trace collector (a Durable Object writing every event of every invocation, Durable Object
 *   events included, to a SQLite trace store on disk) to the Worker (`unsafeObservability` of
 *   Miniflare, read by `getLocalObservabilityEnabledFromEnv`). It cost several ms of CPU and of
 *   latency per turn, and production has no such thing. A caller's own `X_LOCAL_OBSERVABILITY`
 *   (e.g. `X_LOCAL_OBSERVABILITY=true npm start`, to inspect traces) wins.
 * Durable Object storage stays where `persistTo` puts it, on disk: its durability is not tuned.
 * @param colors keep wrangler's colours (its output ends up on a terminal).
 */
export function wranglerEnv(parent: NodeJS.ProcessEnv, colors: boolean): NodeJS.ProcessEnv {
  return {
    ...parent,
    CLOUDFLARE_LOAD_DEV_VARS_FROM_DOT_ENV: "true",
    CLOUDFLARE_INCLUDE_PROCESS_ENV: "false",
    // No network lookup of the `Request.cf` placeholder (it fails or waits 3 s offline).
    CLOUDFLARE_CF_FETCH_ENABLED: "false",
    WRANGLER_SEND_METRICS: "false",
    X_LOCAL_OBSERVABILITY: parent.X_LOCAL_OBSERVABILITY ?? "false",
    ...(colors ? { FORCE_COLOR: "1" } : {}),
  };
}

/**
 * Starts the simulator (when no real upstream is given) and `wrangler dev` on 127.0.0.1.
 * @returns once `GET /healthz` answers 200.
 * @throws when a port is taken, wrangler exits, or it does not become healthy within 90 s (the
 *   error carries the tail of wrangler's output); everything started so far is stopped first.
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  if (options.port) await assertPortFree(options.port, "Deltagate", "PORT");
  if (options.inspectorPort) await assertPortFree(options.inspectorPort, "inspector", "INSPECTOR_PORT");
  if (options.simulatorPort && !options.upstreamBaseUrl) {
    await assertPortFree(options.simulatorPort, "simulator", "SIM_PORT");
  }
  // The env file holds secrets: private dir, mode 0600, removed by stop().
  const dir = mkdtempSync(join(tmpdir(), "deltagate-"));
  const stateDir = options.persistTo ?? join(dir, "state");
  let secrets: LocalSecrets;
  try {
    secrets = localSecrets(stateDir);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const simulator = options.upstreamBaseUrl
    ? null
    : await startSimulator({ port: options.simulatorPort, host: "127.0.0.1", quiet: !options.verbose });
  const port = options.port || (await freePort());
  const origin = `http://127.0.0.1:${port}`;
  const vars: Record<string, string> = {
    DELTAGATE_API_KEYS: options.apiKeys ?? `${LOCAL_DEV_KEY}:local`,
    // Its own origins only: no other page may call it (docs/local-stack.md "Closed by default").
    CORS_ALLOWED_ORIGINS: `${origin},http://localhost:${port}`,
    // The development minting route `POST /demo/client_secret`, for the local tenant (with the
    // default keys only: custom keys name their own tenants).
    ...(options.apiKeys === undefined && options.vars?.DELTAGATE_API_KEYS === undefined
      ? { DEMO_CLIENT_SECRET_TENANT: "local" }
      : {}),
    // The local secrets (the root secret, the admin key; an older state's deprecated ones too):
    // random, from the file beside the state (local-secrets.ts). Production sets its own.
    ...secrets,
    UPSTREAM_BASE_URL: options.upstreamBaseUrl ?? `${simulator!.url}/v1`,
    UPSTREAM_API_KEY: options.upstreamApiKey ?? "sim-key",
    MODELS: options.upstreamBaseUrl ? "gpt-5.1" : "deltagate-sim",
    // The simulator speaks WebSocket mode, so turns go delta-only over a warm socket, as with
    // OpenAI (the Worker's own default for api.openai.com); a real upstream gets the Worker's
    // default for its base URL (src/config/config.ts `defaultUpstreamApi`).
    ...(options.upstreamBaseUrl ? {} : { UPSTREAM_API: "responses-ws" }),
    // Webhooks to a receiver on this machine (docs/webhooks.md "Try it locally"): private and
    // loopback targets, and plain http to them, are allowed here only.
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
    ...Object.fromEntries(
      Object.entries(options.vars ?? {}).map(([name, value]) => [
        name,
        simulator ? value.replaceAll("{SIM}", simulator.url) : value,
      ]),
    ),
  };
  const envFile = join(dir, "dev.env");
  writeFileSync(envFile, toEnvFile(vars), { mode: 0o600 });
  const worker = options.worker ?? DELTAGATE_WORKER;
  const snapshot = options.snapshot ? snapshotWorker(worker) : null;
  const devOptions: WranglerDevOptions = {
    config: snapshot?.configPath ?? join(REPO_ROOT, worker.config),
    envFile,
    persistTo: stateDir,
    port,
    // A snapshot is a frozen copy: nothing to watch.
    watch: !snapshot,
    inspectorPort: options.inspectorPort ?? null,
  };
  const args = [join(REPO_ROOT, "scripts", "wrangler-dev.ts"), JSON.stringify(devOptions)];
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    // Own process group, so stop() can signal wrangler and every workerd it spawned at once.
    detached: true,
    env: wranglerEnv(process.env, options.verbose && process.stdout.isTTY === true),
  });
  let tail = "";
  const collect = (sink: NodeJS.WriteStream) => (chunk: Buffer) => {
    if (options.verbose) sink.write(chunk);
    tail = (tail + chunk.toString("utf8")).slice(-LOG_TAIL_BYTES);
  };
  // Always drained: a full pipe would block wrangler.
  child.stdout?.on("data", collect(process.stdout));
  child.stderr?.on("data", collect(process.stderr));
  let spawnError: Error | null = null;
  const exited = new Promise<void>((resolveExit) => {
    child.once("exit", () => resolveExit());
    child.once("error", (error) => {
      spawnError = error;
      resolveExit();
    });
  });
  const pid = child.pid;
  // Last resort when the caller exits without stop() (uncaught error, process.exit): only
  // synchronous calls work in an `exit` handler, so the group gets SIGKILL right away.
  const onExit = () => {
    if (pid) killGroup(pid, "SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    if (snapshot) rmSync(snapshot.dir, { recursive: true, force: true });
  };
  process.once("exit", onExit);

  let stopping: Promise<void> | null = null;
  const end = (graceful: boolean): Promise<void> => {
    stopping ??= (async () => {
      process.off("exit", onExit);
      if (pid) {
        if (graceful) {
          killGroup(pid, "SIGTERM");
          const grace = new Promise((r) => setTimeout(r, STOP_GRACE_MS).unref());
          await Promise.race([exited, grace]);
        }
        // workerd can outlive wrangler's own exit by a moment; make sure the group is gone.
        killGroup(pid, "SIGKILL");
        if (!graceful) await exited;
      }
      await simulator?.close();
      rmSync(dir, { recursive: true, force: true });
      if (snapshot) rmSync(snapshot.dir, { recursive: true, force: true });
    })();
    return stopping;
  };
  const stop = () => end(true);
  try {
    await waitForHealth(
      origin,
      child,
      HEALTH_TIMEOUT_MS,
      () => tail,
      () => spawnError,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  const models = (vars.MODELS ?? "")
    .split(",")
    .map((model) => model.trim())
    .filter((model) => model.length > 0);
  return {
    baseUrl: `${origin}/v1`,
    origin,
    simulator,
    models,
    secrets,
    stateDir,
    output: () => tail,
    processGroup: pid ?? null,
    runtimeOrigin: () => runtimeOrigin(child.pid ?? -1, origin),
    stop,
    kill: () => end(false),
  };
}
