/**
 * The benchmark's agent workload, identical for every scenario: one user prompt that asks the
 * simulator for `turns - 1` tool rounds (`[sim:tools=N]`, simulator/README.md "Directives"), a
 * shell-like function tool, and a deterministic ~2 KB tool output per round so the history grows
 * the way a coding agent's does.
 * Invariant: everything here is a pure function of (turn number, loop nonce); the nonce only sits
 * in the first user message, so two loops never share a prompt prefix in the simulator's cache
 * (which compares contexts item by item from the start) while all other bytes stay the same.
 */
import type { FunctionTool } from "openai/resources/responses/responses";

/** The model id the baseline and the Responses-HTTP-upstream scenarios use. */
export const HTTP_MODEL = "deltagate-sim";
/** The model id routed to the Responses WebSocket upstream adapter (see `benchUpstreams`). */
export const WS_UPSTREAM_MODEL = "sim-ws-bench";

/** The shell-like function tool the simulator calls (its policy prefers names containing "exec"). */
export const BENCH_TOOLS: FunctionTool[] = [
  {
    type: "function",
    name: "exec_command",
    description: "Runs a shell command in the workspace and returns its combined stdout and stderr.",
    parameters: {
      type: "object",
      properties: { cmd: { type: "string", description: "The command line to run." } },
      required: ["cmd"],
      additionalProperties: false,
    },
    strict: true,
  },
];

/**
 * The first (and only) user message of a loop.
 * @param turns total turns of the loop (≥ 1): the simulator answers with `turns - 1` tool rounds,
 *   then a final message.
 * @param nonce unique per loop (see the module invariant).
 */
export function firstPrompt(turns: number, nonce: string): string {
  return (
    "You are working in a TypeScript repository. Inspect it with `ls -la` and keep checking until " +
    `you are confident about its layout, then summarize. [sim:tools=${turns - 1}] (bench loop ${nonce})`
  );
}

const DIRS = ["src", "test", "scripts", "simulator", "bench", "migrations", "docs", "vendor"];
const EXTS = [".ts", ".json", ".md", ".sql", ".toml"];

/**
 * The tool output of round `round` (1-based): `ls -la`-like lines, exactly `bytes` ASCII bytes.
 * Deterministic (a small LCG seeded by the round), different for every round.
 * @param bytes output size in bytes (the benchmark uses 2,048).
 */
export function toolOutput(round: number, bytes: number): string {
  let seed = (round * 2654435761) >>> 0;
  const next = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  const lines = [`total ${100 + round * 8}`];
  let size = lines[0]!.length + 1;
  while (size < bytes) {
    const dir = DIRS[next(DIRS.length)]!;
    const ext = EXTS[next(EXTS.length)]!;
    const name = `${dir}/module_${String(round).padStart(2, "0")}_${String(next(1000)).padStart(3, "0")}${ext}`;
    const day = String(1 + next(28)).padStart(2, " ");
    const time = `${String(next(24)).padStart(2, "0")}:${String(next(60)).padStart(2, "0")}`;
    const line = `-rw-r--r--  1 agent agent ${String(next(99_999)).padStart(6, " ")} Nov ${day} ${time} ${name}`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join("\n").slice(0, bytes);
}
