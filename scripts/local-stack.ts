/**
 * Starts Deltagate locally as `npm start` and the end-to-end tests run it: the reference simulator
 * (unless a real upstream is configured) beside `wrangler dev`. Owns process lifetimes: `stop()`
 * ends wrangler's whole process group and the simulator.
 * Configuration is handed to wrangler through a generated env file (`--env-file`), which takes
 * the place of `.dev.vars`, so the stack never depends on files a developer left behind.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RunningSimulator, startSimulator } from "../simulator/server.ts";

/** The local development API key (documented in .dev.vars.example and the README). */
export const LOCAL_DEV_KEY = "dg-local-dev-key";

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
  /** Extra variables for the Worker. */
  vars?: Record<string, string>;
  /** Print wrangler's and the simulator's output. */
  verbose: boolean;
  /** Directory for wrangler's local Durable Object storage (`--persist-to`). */
  persistTo?: string;
}

/** A running local stack. */
export interface LocalStack {
  /** `http://127.0.0.1:PORT/v1`: the base URL clients use. */
  baseUrl: string;
  simulator: RunningSimulator | null;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitForHealth(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited with code ${child.exitCode}`);
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`Deltagate did not become healthy at ${url} within ${timeoutMs} ms`);
}

/**
 * Starts the simulator (when no real upstream is given) and `wrangler dev` on 127.0.0.1.
 * @returns once `GET /healthz` answers 200.
 * @throws when wrangler exits or does not become healthy within 90 s.
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const simulator = options.upstreamBaseUrl
    ? null
    : await startSimulator({ port: options.simulatorPort, host: "127.0.0.1", quiet: !options.verbose });
  const port = options.port || (await freePort());
  const vars: Record<string, string> = {
    DELTAGATE_API_KEYS: options.apiKeys ?? `${LOCAL_DEV_KEY}:local`,
    UPSTREAM_BASE_URL: options.upstreamBaseUrl ?? `${simulator!.url}/v1`,
    UPSTREAM_API_KEY: options.upstreamApiKey ?? "sim-key",
    MODELS: options.upstreamBaseUrl ? (options.vars?.MODELS ?? "gpt-5.1") : "deltagate-sim",
    ...options.vars,
  };
  const dir = mkdtempSync(join(tmpdir(), "deltagate-"));
  const envFile = join(dir, "dev.env");
  writeFileSync(
    envFile,
    Object.entries(vars)
      .map(([k, v]) => `${k}=${v}`)
      .join("\n"),
    { mode: 0o600 },
  );
  const args = [
    "wrangler",
    "dev",
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    "--env-file",
    envFile,
    "--show-interactive-dev-session=false",
    "--persist-to",
    options.persistTo ?? join(dir, "state"),
  ];
  const child = spawn("npx", args, {
    stdio: options.verbose ? "inherit" : "ignore",
    detached: true,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: process.env.CI ?? "" },
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.pid) {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // already gone
      }
      await new Promise((r) => child.once("exit", r).once("error", r));
    }
    await simulator?.close();
  };
  try {
    await waitForHealth(url, child, 90_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { baseUrl: `${url}/v1`, simulator, stop };
}
