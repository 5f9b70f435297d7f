/**
 * Ctrl-C during `npm run bench:noise`, `bench:breakdown` or `bench:against` stops every stack the
 * run started (bench/paired-loops.ts): each stack's `wrangler dev` runs in a process group of its
 * own (scripts/local-stack.ts), which a signal to the benchmark does not reach, so without the
 * run's own handling they were left running, ports and all, after the benchmark had exited.
 * Here the benchmark is `bench/noise.ts`, signalled while its stacks are up; Linux only (/proc).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../scripts/local-stack.ts";

interface Proc {
  pid: number;
  ppid: number;
  pgrp: number;
  state: string;
}

function processes(): Proc[] {
  const found: Proc[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      found.push({
        pid: Number(entry),
        state: fields[0] ?? "?",
        ppid: Number(fields[1]),
        pgrp: Number(fields[2]),
      });
    } catch {
      // it ended while we looked
    }
  }
  return found;
}

/** Live (not zombie) processes in any of `groups`. */
const liveIn = (groups: Set<number>): Proc[] =>
  processes().filter((p) => groups.has(p.pgrp) && p.state !== "Z");

async function until<T>(what: string, timeoutMs: number, probe: () => T | undefined): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.runIf(process.platform === "linux")("a paired-loops benchmark stopped by SIGINT", () => {
  it("exits 130 and leaves none of its stacks' processes running", async () => {
    const bench: ChildProcess = spawn(process.execPath, [join(REPO_ROOT, "bench", "noise.ts")], {
      cwd: REPO_ROOT,
      env: { ...process.env, NOISE_ROUNDS: "1000" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    bench.stdout?.on("data", (c: Buffer) => (output += c.toString()));
    bench.stderr?.on("data", (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((resolve) => bench.once("exit", (code) => resolve(code)));
    try {
      // Its stacks: process groups led by its children (each stack's wrangler process). Wait for
      // two, so one is up and the next may be starting.
      const groups = await until("two stacks", 90_000, () => {
        const leaders = processes().filter((p) => p.ppid === bench.pid && p.pgrp === p.pid);
        return leaders.length >= 2 ? new Set(leaders.map((p) => p.pgrp)) : undefined;
      });
      const children = processes().filter((p) => p.ppid === bench.pid);
      expect(liveIn(groups).length).toBeGreaterThan(groups.size); // workerd besides each leader
      bench.kill("SIGINT");
      expect(await exited, output.slice(-2_000)).toBe(130);
      await until("every stack process to end", 10_000, () =>
        liveIn(groups).length === 0 ? true : undefined,
      );
      const pids = new Set(children.map((p) => p.pid));
      expect(processes().filter((p) => pids.has(p.pid) && p.state !== "Z")).toEqual([]);
    } finally {
      if (bench.exitCode === null) bench.kill("SIGKILL");
    }
  });
});
