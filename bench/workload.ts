/**
 * The benchmark's agent workload, identical for every scenario and shaped like a coding agent's
 * session (Codex is the model: test/support/codex-notes.md): a ~12 KB developer message of base
 * instructions as the first input item (Codex sends its instructions that way, so they are part of
 * the chained context, not resent on delta turns), ~4 KB of function tools sent with every request
 * (Codex sends `tools` in full on every frame), one user prompt that asks the simulator for
 * `turns - 1` tool rounds (`[sim:tools=N]`, simulator/README.md "Directives"), and tool outputs of
 * 2–8 KB, so the history grows to ≥ 200 KB by turn 30.
 * Invariant: everything here is a pure function of (turn number, loop nonce); the nonce only sits
 * in the user prompt, so two loops never share a prompt prefix past the instructions in the
 * simulator's cache (which compares contexts item by item from the start) while all other bytes
 * stay the same.
 */
import { randomBytes } from "node:crypto";
import type { ChatCompletionFunctionTool } from "openai/resources/chat/completions";
import type { FunctionTool, ResponseInputItem } from "openai/resources/responses/responses";

/** Instructions of a coding agent, repeated to `INSTRUCTIONS_BYTES` (the content does not matter). */
const INSTRUCTION_PARAGRAPHS = [
  "You are a coding agent working in the user's repository through a shell. Keep going until the task is " +
    "completely resolved before ending your turn. Only stop when you are sure the problem is solved.",
  "Use `exec_command` to run commands. Prefer `rg` over `grep` for searching, read files before editing " +
    "them, and keep edits minimal and focused on the task. Never revert changes you did not make.",
  "When you run tests, run the narrowest set that covers your change first. Report failures exactly as " +
    "the tool printed them; do not paraphrase error messages and do not guess at their cause.",
  "Formatting: answer in plain text with short paragraphs. Reference files with their repository-relative " +
    "paths and line numbers. Do not paste large files back to the user; summarize what changed and why.",
  "Safety: never run destructive commands (rm -rf, git reset --hard, force pushes) unless the user asked " +
    "for exactly that. Ask before installing packages or touching files outside the workspace.",
  "Planning: for a task with several steps, keep a short plan, update it as you go, and mark each step " +
    "done only when it is verified. Prefer small, reviewable commits with honest messages.",
];

/** Bytes of the developer message that carries the base instructions. */
export const INSTRUCTIONS_BYTES = 12_288;

/** The base instructions, exactly `INSTRUCTIONS_BYTES` ASCII bytes. */
export const INSTRUCTIONS: string = (() => {
  let text = "";
  for (let i = 0; text.length < INSTRUCTIONS_BYTES; i++) {
    text += `${i + 1}. ${INSTRUCTION_PARAGRAPHS[i % INSTRUCTION_PARAGRAPHS.length]}\n`;
  }
  return text.slice(0, INSTRUCTIONS_BYTES);
})();

/**
 * Function tools like a coding agent's. The simulator calls the first whose name contains a shell
 * hint (`exec_command`); the others only make the request as large as a real agent's.
 */
export const BENCH_TOOLS: FunctionTool[] = [
  {
    type: "function",
    name: "exec_command",
    description:
      "Runs a command in a PTY in the workspace and returns its combined stdout and stderr. Use it to read " +
      "files, search the repository, build and run tests. Output beyond the tool-output cap is truncated.",
    parameters: {
      type: "object",
      properties: {
        cmd: { type: "string", description: "The command line to run (bash syntax)." },
        workdir: { type: "string", description: "Working directory, relative to the workspace root." },
        timeout_ms: { type: "number", description: "Kill the command after this many milliseconds." },
        login: { type: "boolean", description: "Run in a login shell (loads the user's profile)." },
      },
      required: ["cmd", "workdir", "timeout_ms", "login"],
      additionalProperties: false,
    },
    strict: true,
  },
  {
    type: "function",
    name: "apply_patch",
    description:
      "Applies a patch to files in the workspace. The patch uses the *** Begin Patch / *** End Patch envelope " +
      "with Add File, Update File and Delete File sections; context lines must match the file exactly.",
    parameters: {
      type: "object",
      properties: { input: { type: "string", description: "The whole patch text, envelope included." } },
      required: ["input"],
      additionalProperties: false,
    },
    strict: true,
  },
  {
    type: "function",
    name: "write_stdin",
    description:
      "Writes characters to the stdin of a running exec session and returns the output produced since the " +
      "last read. Use it for interactive programs and long-running processes started with exec_command.",
    parameters: {
      type: "object",
      properties: {
        session_id: { type: "number", description: "Identifier of the running exec session." },
        chars: { type: "string", description: "Characters to write; may be empty to only poll." },
        yield_time_ms: { type: "number", description: "How long to wait for output before returning." },
      },
      required: ["session_id", "chars", "yield_time_ms"],
      additionalProperties: false,
    },
    strict: true,
  },
  {
    type: "function",
    name: "update_plan",
    description:
      "Records the agent's plan for a multi-step task: a list of steps with a status each (pending, " +
      "in_progress, completed). Exactly one step may be in progress at a time; keep the plan short.",
    parameters: {
      type: "object",
      properties: {
        explanation: { type: "string", description: "Why the plan changed, in one sentence." },
        plan: {
          type: "array",
          items: {
            type: "object",
            properties: {
              step: { type: "string" },
              status: { type: "string", enum: ["pending", "in_progress", "completed"] },
            },
            required: ["step", "status"],
            additionalProperties: false,
          },
        },
      },
      required: ["explanation", "plan"],
      additionalProperties: false,
    },
    strict: true,
  },
  {
    type: "function",
    name: "view_image",
    description:
      "Attaches an image file from the workspace to the conversation so the model can look at it, e.g. a " +
      "screenshot of a failing UI test or a rendered chart. Only PNG, JPEG, GIF and WebP are supported.",
    parameters: {
      type: "object",
      properties: { path: { type: "string", description: "Path of the image, relative to the workspace." } },
      required: ["path"],
      additionalProperties: false,
    },
    strict: true,
  },
  {
    type: "function",
    name: "request_user_input",
    description:
      "Asks the user a question and waits for the answer. Use it only when the task cannot continue without " +
      "a decision only the user can make; never to confirm routine steps or to report progress.",
    parameters: {
      type: "object",
      properties: {
        question: { type: "string", description: "The question, one or two sentences." },
        options: { type: "array", items: { type: "string" }, description: "Suggested answers, if any." },
      },
      required: ["question", "options"],
      additionalProperties: false,
    },
    strict: true,
  },
];

/** `BENCH_TOOLS` in the Chat Completions wire format (same names, descriptions and schemas). */
export const CHAT_TOOLS: ChatCompletionFunctionTool[] = BENCH_TOOLS.map((tool) => ({
  type: "function",
  function: {
    name: tool.name,
    ...(tool.description ? { description: tool.description } : {}),
    ...(tool.parameters ? { parameters: tool.parameters } : {}),
    ...(tool.strict === null ? {} : { strict: tool.strict }),
  },
}));

/**
 * Tool output sizes in KiB, cycled over the rounds: 2–8 KiB, mean 6.4 KiB — file reads, diffs and
 * test logs near a tool-output cap, the bulk of a coding agent's context.
 */
const TOOL_OUTPUT_KIB = [8, 4, 7, 8, 6, 2, 8, 7, 5, 8, 6, 8] as const;

/** Bytes of the tool output of round `round` (1-based). */
export function toolOutputBytes(round: number): number {
  return TOOL_OUTPUT_KIB[(round - 1) % TOOL_OUTPUT_KIB.length]! * 1024;
}

/** The letters a loop nonce spells each hex digit 0–9 with (a–f stay as they are). */
const DIGIT_LETTERS = "ghijklmnop";

/**
 * A fresh loop nonce: `prefix-` and 32 random letters (16 random bytes in hex, each digit spelled
 * as a letter). It carries no digits on purpose: a UUID's dash-grouped digits can form 13–19
 * digits with a card issuer's prefix and a valid Luhn checksum, which Deltagate's default safety
 * checks refuse as a card number (src/safety/classifiers/pii.ts) — it happened to a warm-up loop.
 */
export function loopNonce(prefix: string): string {
  const hex = randomBytes(16).toString("hex");
  return `${prefix}-${hex.replace(/[0-9]/g, (d) => DIGIT_LETTERS[Number(d)]!)}`;
}

/**
 * The user prompt of a loop.
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

/** The first turn's input: the developer message with the instructions, then the user prompt. */
export function firstInput(turns: number, nonce: string): ResponseInputItem[] {
  return [
    { type: "message", role: "developer", content: INSTRUCTIONS },
    { type: "message", role: "user", content: firstPrompt(turns, nonce) },
  ];
}

const DIRS = ["src", "test", "scripts", "simulator", "bench", "migrations", "docs", "vendor"];
const EXTS = [".ts", ".json", ".md", ".sql", ".toml"];

/**
 * The tool output of round `round` (1-based): `ls -la`-like lines, exactly `bytes` ASCII bytes.
 * Deterministic (a small LCG seeded by the round), different for every round.
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

/** Sizes that describe a loop of `turns` turns (for the results file). */
export interface WorkloadFacts {
  turns: number;
  instructionsBytes: number;
  /** JSON bytes of `tools`, sent with every request. */
  toolsBytes: number;
  /** Tool output bytes per round: smallest, largest, mean. */
  toolOutputBytes: { min: number; max: number; mean: number };
  /** Sum of the raw tool outputs of the loop. */
  toolOutputTotalBytes: number;
}

/** The workload's sizes for a loop of `turns` turns. */
export function workloadFacts(turns: number): WorkloadFacts {
  const sizes = Array.from({ length: Math.max(0, turns - 1) }, (_, i) => toolOutputBytes(i + 1));
  const total = sizes.reduce((a, b) => a + b, 0);
  return {
    turns,
    instructionsBytes: INSTRUCTIONS_BYTES,
    toolsBytes: Buffer.byteLength(JSON.stringify(BENCH_TOOLS)),
    toolOutputBytes: {
      min: sizes.length > 0 ? Math.min(...sizes) : 0,
      max: sizes.length > 0 ? Math.max(...sizes) : 0,
      mean: sizes.length > 0 ? total / sizes.length : 0,
    },
    toolOutputTotalBytes: total,
  };
}

/** The text of an item's `content` or a tool `output`: the string, or its parts' `text` joined. */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part: unknown) =>
        typeof part === "object" && part !== null && "text" in part ? String(part.text) : "",
      )
      .join("");
  }
  return "";
}
