/**
 * Runs `npm start`'s program (scripts/start.ts) as a child process with a chosen environment, as a
 * user's shell would, for tests of what reaches the Worker. Owns the child's lifetime: `stop()`
 * sends SIGTERM (start.ts then stops wrangler, every workerd and the simulator) and waits for it
 * to exit; Durable Object state goes to a temporary directory removed afterwards.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, REPO_ROOT } from "../../scripts/local-stack.ts";
import { SETTING_NAMES } from "../../src/config/settings.ts";

/** Longest wait for the start banner, in ms (a cold wrangler start takes 5–15 s, more under load). */
const START_TIMEOUT_MS = 90_000;
/** Longest wait for start.ts to exit after SIGTERM, in ms. */
const STOP_TIMEOUT_MS = 15_000;

/** A running `npm start`. */
export interface NpmStart {
  /** `http://127.0.0.1:PORT`. */
  origin: string;
  /** The embedded simulator's base URL, without `/v1`. */
  simulatorUrl: string;
  port: number;
  /** Its Durable Object state directory (`DELTAGATE_STATE_DIR`), where its secrets file is. */
  stateDir: string;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts scripts/start.ts on free ports with `settings` as the only Worker settings in its
 * environment (the caller's own setting variables are removed first).
 * `settings` may use `{SIM}` for the simulator's base URL (it is known before the start).
 * @returns once the banner is printed.
 * @throws with the output so far when it exits or does not print the banner in time.
 */
export async function startNpmStart(settings: Record<string, string>): Promise<NpmStart> {
  const port = await freePort();
  const simPort = await freePort();
  const simulatorUrl = `http://127.0.0.1:${simPort}`;
  const stateDir = mkdtempSync(join(tmpdir(), "deltagate-start-"));
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SETTING_NAMES) delete env[name];
  for (const [name, value] of Object.entries(settings)) env[name] = value.replaceAll("{SIM}", simulatorUrl);
  Object.assign(env, { PORT: String(port), SIM_PORT: String(simPort), DELTAGATE_STATE_DIR: stateDir });
  const child: ChildProcess = spawn(process.execPath, [join(REPO_ROOT, "scripts", "start.ts")], {
    cwd: REPO_ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk.toString("utf8");
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, STOP_TIMEOUT_MS))]);
    }
    rmSync(stateDir, { recursive: true, force: true });
  };
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!output.includes("(Ctrl-C stops")) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`npm start did not come up:\n${output.slice(-8_000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { origin: `http://127.0.0.1:${port}`, simulatorUrl, port, stateDir, output: () => output, stop };
}
