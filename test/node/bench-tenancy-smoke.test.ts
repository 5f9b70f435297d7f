/**
 * `npm run bench:tenancy` works end to end in a tiny configuration (1 s phases, one round, a
 * 500-frame flood, a noisy tenant limited to 4 turns a minute): the stack really starts, the
 * sockets reach the runtime past wrangler dev's proxy (scripts/runtime-origin.ts) and through it,
 * the flooder runs in its own process, once per shape of frame. It asserts the shape and the
 * outcomes — the noisy tenant gets completions and 429s and nothing else, the others no 429 at
 * all, every flooding frame is answered — never a timing nor anything that depends on the
 * machine's load (how many flooding frames arrive faster than the socket's budget refills).
 * Every session runs at least one turn however short its phase (bench/tenancy.ts), so each row
 * has turns, and the noisy tenant's 10 sessions ask for at least 10 turns of a limit that admits
 * at most 8 (4 in each of the two epoch minutes a phase can span): some are refused, on any machine.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../scripts/local-stack.ts";
import { runProcess } from "../support/e2e-process.ts";

const resultsDir = mkdtempSync(join(tmpdir(), "deltagate-bench-tenancy-"));
const FRAMES = 500;
/** The noisy tenant's `turns_per_minute`: below half its 10 sessions' first turns. */
const NOISY_LIMIT = 4;
/** The run: the stack's start, two 1 s tenant phases, seven 1 s flood phases and their floods. */
const RUN_MS = 240_000;

afterAll(() => rmSync(resultsDir, { recursive: true, force: true }));

interface Row {
  phase: string;
  turns: number;
  rate_limited: number;
  other_errors: number;
}

describe("npm run bench:tenancy (tiny configuration)", () => {
  it(
    "throttles the noisy tenant with 429s only, answers every flooding frame of each shape, and writes its results",
    async () => {
      const env: NodeJS.ProcessEnv = Object.fromEntries(
        Object.entries(process.env).filter(([name]) => !name.startsWith("BENCH_")),
      );
      Object.assign(env, {
        BENCH_SECONDS: "1",
        BENCH_ROUNDS: "1",
        BENCH_FLOOD_FRAMES: String(FRAMES),
        BENCH_NOISY_LIMIT: String(NOISY_LIMIT),
        BENCH_RESULTS_DIR: resultsDir,
      });
      const run = await runProcess(process.execPath, [join(REPO_ROOT, "bench/tenancy.ts")], {
        cwd: REPO_ROOT,
        env,
        timeoutMs: RUN_MS,
      });
      const diagnostics = `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`;
      expect(run.timedOut, diagnostics).toBe(false);
      expect(run.code, diagnostics).toBe(0);

      const results = JSON.parse(readFileSync(join(resultsDir, "tenancy-latest.json"), "utf8")) as {
        rows: Row[];
        flooder: Record<string, { replies: Record<string, number>; closed: unknown }>;
        noisyErrors: string[];
        quietErrors: string[];
      };
      expect(results.rows.map((row) => row.phase)).toEqual([
        "9 tenants, no noisy tenant",
        "9 tenants, with the noisy one",
        `noisy tenant (10×, limit ${NOISY_LIMIT}/min)`,
        "quiet session alone",
        `quiet session, ${FRAMES} default-lane creates flooding another socket`,
        `quiet session, ${FRAMES} stream_id creates flooding another socket`,
        `quiet session, ${FRAMES} creates, type not first flooding another socket`,
        `quiet session, ${FRAMES} unknown event types flooding another socket`,
        "quiet session alone (through wrangler dev's proxy)",
        `quiet session, ${FRAMES} default-lane creates flooding another socket (through wrangler dev's proxy)`,
      ]);
      for (const row of results.rows) {
        expect(row.other_errors, row.phase).toBe(0);
        expect(row.turns, row.phase).toBeGreaterThan(0);
      }
      // The noisy tenant's outcomes are completions (turns above) and 429s only (other_errors
      // above); at least 10 turns asked of a limit that admits at most 8 in the phase, so some 429s.
      const noisy = results.rows[2]!;
      expect(noisy.rate_limited).toBeGreaterThan(0);
      expect(results.rows.filter((row) => row !== noisy).every((row) => row.rate_limited === 0)).toBe(true);
      // Every frame of each flood is answered once: a create ran (response.created, then its
      // completion) or got an `error` event (queue full, over the socket's frame budget; an unknown
      // type, 400), and the socket stayed open.
      expect(Object.keys(results.flooder).sort()).toEqual(["default", "reordered", "stream_id", "unknown"]);
      const refusals = [
        "error:websocket_queue_full",
        "error:websocket_rate_limit_exceeded",
        "error:unknown_event_type",
      ];
      for (const [shape, { replies, closed }] of Object.entries(results.flooder)) {
        for (const label of Object.keys(replies)) {
          if (label.startsWith("error:")) expect(refusals, `${shape}: ${label}`).toContain(label);
        }
        const errors = Object.entries(replies)
          .filter(([label]) => label.startsWith("error:"))
          .reduce((sum, [, n]) => sum + n, 0);
        expect((replies["response.created"] ?? 0) + errors, shape).toBe(FRAMES);
        expect(replies["response.completed"] ?? 0, shape).toBe(replies["response.created"] ?? 0);
        expect(closed, shape).toBeNull();
      }
    },
    RUN_MS + 10_000,
  );
});
