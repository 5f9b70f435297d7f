/**
 * `npm run bench:tenancy` works end to end in a tiny configuration (3 s phases, one round, a
 * 500-frame flood, a noisy tenant limited to 10 turns a minute): the stack really starts, the
 * sockets reach the runtime past wrangler dev's proxy (scripts/runtime-origin.ts) and through it,
 * the flooder runs in its own process. It asserts the shape and the outcomes — the noisy tenant
 * is refused with 429s and nothing else goes wrong, every flooding frame is answered — never a
 * timing.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../scripts/local-stack.ts";
import { runProcess } from "../support/e2e-process.ts";

const resultsDir = mkdtempSync(join(tmpdir(), "deltagate-bench-tenancy-"));
const FRAMES = 500;

afterAll(() => rmSync(resultsDir, { recursive: true, force: true }));

interface Row {
  phase: string;
  turns: number;
  rate_limited: number;
  other_errors: number;
}

describe("npm run bench:tenancy (tiny configuration)", () => {
  it("throttles the noisy tenant with 429s only, answers every flooding frame, and writes its results", async () => {
    const env: NodeJS.ProcessEnv = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith("BENCH_")),
    );
    Object.assign(env, {
      BENCH_SECONDS: "3",
      BENCH_ROUNDS: "1",
      BENCH_FLOOD_FRAMES: String(FRAMES),
      BENCH_NOISY_LIMIT: "10",
      BENCH_RESULTS_DIR: resultsDir,
    });
    const run = await runProcess(process.execPath, [join(REPO_ROOT, "bench/tenancy.ts")], {
      cwd: REPO_ROOT,
      env,
      timeoutMs: 150_000,
    });
    const diagnostics = `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`;
    expect(run.timedOut, diagnostics).toBe(false);
    expect(run.code, diagnostics).toBe(0);

    const results = JSON.parse(readFileSync(join(resultsDir, "tenancy-latest.json"), "utf8")) as {
      rows: Row[];
      flooder: { replies: Record<string, number>; closed: unknown };
      noisyErrors: string[];
      quietErrors: string[];
    };
    expect(results.rows.map((row) => row.phase)).toEqual([
      "9 tenants, no noisy tenant",
      "9 tenants, with the noisy one",
      "noisy tenant (10×, limit 10/min)",
      "quiet session alone",
      `quiet session, ${FRAMES} creates flooding another socket`,
      "quiet session alone (through wrangler dev's proxy)",
      `quiet session, ${FRAMES} creates flooding another socket (through wrangler dev's proxy)`,
    ]);
    for (const row of results.rows) {
      expect(row.other_errors, row.phase).toBe(0);
      expect(row.turns, row.phase).toBeGreaterThan(0);
    }
    const noisy = results.rows[2];
    expect(noisy?.rate_limited).toBeGreaterThan(0);
    expect(results.rows.filter((row) => row !== noisy).every((row) => row.rate_limited === 0)).toBe(true);
    // Every frame of the flood is answered: it ran (created) or was refused for the full queue.
    const { replies, closed } = results.flooder;
    expect((replies["response.created"] ?? 0) + (replies["error:websocket_queue_full"] ?? 0)).toBe(FRAMES);
    expect(replies["response.completed"]).toBe(replies["response.created"]);
    expect(closed).toBeNull();
  });
});
