/**
 * Runs a real client program (the demo, the Codex CLI) as a child process for end-to-end tests
 * and collects its exit status and output. Owns the child's lifetime: it runs in its own process
 * group with stdin on /dev/null, and on timeout the whole group is killed (Codex's Node wrapper
 * starts a native binary, which must not outlive the test).
 */
import { spawn } from "node:child_process";

/** What a finished child produced. */
export interface ProcessResult {
  /** Exit code, or null when it was ended by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** True when the timeout killed it. */
  timedOut: boolean;
}

/** Options of `runProcess`. */
export interface RunOptions {
  cwd: string;
  /** The child's complete environment (nothing is inherited implicitly). */
  env: NodeJS.ProcessEnv;
  /** Kill the process group (SIGKILL) after this many ms. */
  timeoutMs: number;
}

/**
 * Runs `command args…` to completion. Never rejects for a non-zero exit: the caller asserts.
 * @throws {Error} only when the program cannot be started at all.
 */
export function runProcess(
  command: string,
  args: readonly string[],
  options: RunOptions,
): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      killGroup(); // leftovers of the group (none expected)
      resolve({ code, signal, stdout, stderr, timedOut });
    });
  });
}
