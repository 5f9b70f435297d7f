/**
 * A reference simulator in a process of its own (simulator-entry.ts), as the benchmark's
 * upstream: a provider never shares a thread with its client, and the direct WebSocket scenario
 * (E) would otherwise pay permessage-deflate and JSON on both ends on the bench client's one
 * thread (issue #27). Its request recorder is read over the simulator's inspection API
 * (`GET`/`DELETE /_sim/requests`, simulator/server.ts) between loops, never during one.
 * Owns the child: `close()` ends it, a process `exit` hook kills it if the caller never got to
 * `close()`, and the child itself exits when its stdin (a pipe from this process) ends.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { REPO_ROOT } from "../scripts/local-stack.ts";
import type { RecordedRequestJson } from "../simulator/recorder.ts";
import type { SimulatorOptions } from "../simulator/server.ts";

/** How long the child may take to listen, ms. */
const START_TIMEOUT_MS = 20_000;
/** How long `close()` waits for the child after SIGTERM before SIGKILL, ms. */
const STOP_GRACE_MS = 3_000;
/** How the child's announcement of its port starts (simulator-entry.ts). */
const PORT_LINE = '{"port":';

/** What the scenarios read of the upstream's recorder (asynchronous: it lives in the child). */
export interface TrafficRecorder {
  /** Forgets every record. */
  clear(): Promise<void>;
  /** Every record since the last `clear`, in arrival order. */
  list(): Promise<RecordedRequestJson[]>;
}

/** A running simulator process. */
export interface SimulatorProcess {
  /** `http://127.0.0.1:PORT` (no `/v1`). */
  url: string;
  port: number;
  /** The child's process id (for CPU accounting). */
  pid: number | null;
  recorder: TrafficRecorder;
  /** Stops the child. Idempotent; never throws. */
  close(): Promise<void>;
}

function remoteRecorder(url: string): TrafficRecorder {
  return {
    async clear() {
      const response = await fetch(`${url}/_sim/requests`, { method: "DELETE" });
      await response.body?.cancel();
      if (!response.ok) throw new Error(`the simulator's recorder refused DELETE: ${response.status}`);
    },
    async list() {
      const response = await fetch(`${url}/_sim/requests`);
      if (!response.ok) throw new Error(`the simulator's recorder answered ${response.status}`);
      return ((await response.json()) as { data: RecordedRequestJson[] }).data;
    },
  };
}

/**
 * Starts a simulator process on a free port of 127.0.0.1.
 * @param verbose pass the simulator's log lines through to this process's stdout.
 * @throws {Error} when it does not listen within 20 s (the child is killed first).
 */
export async function startSimulatorProcess(
  options: Omit<SimulatorOptions, "port" | "host" | "quiet">,
  verbose: boolean,
): Promise<SimulatorProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...process.execArgv,
      join(REPO_ROOT, "bench", "simulator-entry.ts"),
      JSON.stringify({ ...options, port: 0, host: "127.0.0.1", quiet: !verbose }),
    ],
    { cwd: REPO_ROOT, stdio: ["pipe", "pipe", "inherit"] },
  );
  const kill = (): void => {
    child.kill("SIGKILL");
  };
  process.once("exit", kill);
  const exited = once(child, "exit").catch(() => undefined);
  // The simulator's own log lines (verbose only) are passed on; the pipe is always drained.
  const lines = createInterface({ input: child.stdout! });
  let announced: ((port: number) => void) | null = null;
  lines.on("line", (line) => {
    const port = line.startsWith(PORT_LINE) ? (JSON.parse(line) as { port?: unknown }).port : undefined;
    if (typeof port === "number" && announced) announced(port);
    else if (verbose) process.stdout.write(`${line}\n`);
  });
  let port: number;
  try {
    port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error("the simulator process did not listen within 20 s")),
        START_TIMEOUT_MS,
      );
      announced = (p) => {
        clearTimeout(timer);
        resolve(p);
      };
      child.once("error", reject);
      child.once("exit", (code, signal) =>
        reject(new Error(`the simulator process exited (${code ?? signal}) before it listened`)),
      );
    });
  } catch (error) {
    kill();
    process.off("exit", kill);
    throw error;
  } finally {
    announced = null;
  }
  const url = `http://127.0.0.1:${port}`;
  let closing: Promise<void> | null = null;
  return {
    url,
    port,
    pid: child.pid ?? null,
    recorder: remoteRecorder(url),
    close() {
      closing ??= (async () => {
        process.off("exit", kill);
        if (child.exitCode === null && child.signalCode === null) {
          child.kill("SIGTERM");
          const grace = new Promise((r) => setTimeout(r, STOP_GRACE_MS).unref());
          await Promise.race([exited, grace]);
          kill();
          await exited;
        }
      })();
      return closing;
    },
  };
}
