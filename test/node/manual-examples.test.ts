/**
 * The manual's whole examples run as written, against the shared `npm start` stack (its
 * `http://127.0.0.1:8787` swapped for the stack's origin), each saved as a file in the checkout so
 * its imports resolve to the dev dependencies, as the README says:
 * - every `ts` block of README.md's "Use it" section: a whole tool loop with the simulator (one
 *   tool call, then the final answer, simulator/README.md), so each must print the final answer;
 * - the README's HTTP example (`sh`, curl), under `sh -e`;
 * - every top-level `ts` block of a docs/ page that starts with an `import` (a whole program, not
 *   a fragment): it must exit 0. The e2e-client-*.test.ts files test the families in depth; this file
 * keeps the README's own copies from drifting (they once used a `tools` they never defined).
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { useSharedStack } from "../support/e2e-stack.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const README = readFileSync(join(ROOT, "README.md"), "utf8");
const e2e = useSharedStack();

/** The contents of `markdown`'s top-level fenced `lang` blocks, in order. */
function codeBlocks(markdown: string, lang: "ts" | "sh"): string[] {
  return [...markdown.matchAll(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, "gm"))].map(
    (match) => match[1] ?? "",
  );
}

/** The `lang` blocks between "## Use it" and the next second-level heading. */
function useItBlocks(lang: "ts" | "sh"): string[] {
  const start = README.indexOf("\n## Use it\n");
  const end = README.indexOf("\n## ", start + 1);
  return codeBlocks(README.slice(start, end === -1 ? undefined : end), lang);
}

const snippets = useItBlocks("ts");
/** The HTTP example: the one `sh` block that sets `BASE`. */
const httpExample = useItBlocks("sh").find((block) => block.includes("BASE=http://127.0.0.1:8787/v1"));
// Inside the checkout (ignored by git) so that bare imports find node_modules; a fresh clone has
// no .wrangler/ until a stack starts.
mkdirSync(join(ROOT, ".wrangler"), { recursive: true });
const dir = mkdtempSync(join(ROOT, ".wrangler", "manual-examples-"));

/** The whole programs of docs/: top-level `ts` blocks whose first line is an import, by page. */
function docsPrograms(): Array<readonly [string, string]> {
  return readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .flatMap((name) =>
      codeBlocks(readFileSync(join(ROOT, "docs", name), "utf8"), "ts")
        .filter((code) => code.startsWith("import "))
        .map((code) => [`docs/${name}`, code] as const),
    );
}

/** Runs `code` as a file of the checkout against the shared stack; its standard output. */
async function runProgram(name: string, code: string): Promise<string> {
  const file = join(dir, `${name.replaceAll(/[^A-Za-z0-9]/g, "-")}.ts`);
  writeFileSync(file, code.replaceAll("http://127.0.0.1:8787", e2e.stack.origin));
  const { stdout } = await promisify(execFile)(process.execPath, [file], {
    cwd: ROOT,
    timeout: 60_000,
    env: { ...process.env, OPENAI_API_KEY: "" },
  });
  return stdout;
}
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the README's client examples", () => {
  it("are found: the openai SDK's WebSocket mode, the Agents SDK, the Vercel AI SDK, LangChain", () => {
    expect(snippets.map((code) => code.split("\n")[0])).toEqual([
      'import OpenAI from "openai";',
      "// OpenAI Agents SDK (@openai/agents), over its Responses WebSocket transport",
      "// Vercel AI SDK (ai, @ai-sdk/openai)",
      "// LangChain (@langchain/openai)",
    ]);
  });

  it.each(snippets.map((code, i) => [code.split("\n")[0] ?? `block ${i}`, i, code] as const))(
    "%s: runs as written and prints the final answer",
    async (_name, i, code) => {
      expect(await runProgram(`readme-${i}`, code)).toContain("Done after 1 tool call(s).");
    },
    90_000,
  );

  it("the HTTP example (curl): streams, stores, lists, replays and deletes a response", async () => {
    expect(httpExample).toBeDefined();
    const script = `set -e\n${(httpExample ?? "").replaceAll("http://127.0.0.1:8787", e2e.stack.origin)}`;
    const { stdout } = await promisify(execFile)("sh", ["-c", script], { cwd: ROOT, timeout: 60_000 });
    expect(stdout).toContain("event: response.completed"); // the streamed response, and its replay
    expect(stdout).toContain('"object":"response"'); // the stored one
    expect(stdout).toContain('"object":"list"'); // its input items
    expect(stdout).toContain('"deleted":true');
  }, 90_000);
});

describe("the docs' whole programs", () => {
  const programs = docsPrograms();

  it("are found: background mode's polling loop, a conversation's first turn", () => {
    expect(programs.map(([page]) => page)).toEqual(["docs/background.md", "docs/conversations.md"]);
  });

  it.each(programs.map(([page, code], i) => [page, i, code] as const))(
    "%s: runs as written",
    async (page, i, code) => {
      await runProgram(`docs-${i}-${page}`, code);
    },
    90_000,
  );
});
