/**
 * Runs the installed Codex CLI (`codex exec`, or `codex exec resume --last` of an earlier run;
 * npm @openai/codex 0.171.0) against a Deltagate URL over the Responses WebSocket, for
 * end-to-end tests. Owns the throwaway CODEX_HOME (shared by a run and the runs resuming it): its
 * config.toml is test/fixtures/codex/config.toml.template with the provider's `base_url` and the
 * model catalog path filled in, plus test-only provider settings that make a broken WebSocket
 * turn show up as a fallback or a failure within seconds instead of being retried quietly.
 * See test/support/codex-notes.md for how this Codex version talks to a custom provider.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { z } from "zod";
import { LOCAL_DEV_KEY, REPO_ROOT } from "../../scripts/local-stack.ts";
import { type ProcessResult, runProcess } from "./e2e-process.ts";

/** The Codex CLI entry point installed by npm (a Node wrapper around the native binary). */
export const CODEX_BIN = join(REPO_ROOT, "node_modules", ".bin", "codex");

/** The text Codex prints as an `error` item when it gives up on WebSockets (codex-notes.md). */
export const WEBSOCKET_FALLBACK_TEXT = "Falling back from WebSockets to HTTPS transport";

/**
 * Provider settings appended to the template's `[model_providers.deltagate]` table:
 * no stream retries, so any WebSocket failure turns into an immediate, visible HTTP fallback
 * (or a failed run) rather than a silent reconnect; an idle timeout well below the test's, so a
 * stalled turn fails the run instead of hanging for Codex's default 300 s.
 */
const TEST_PROVIDER_SETTINGS = ["stream_max_retries = 0", "stream_idle_timeout_ms = 20000"];

/** One line of `codex exec --json` output (only the fields the tests read are typed). */
const codexEvent = z.looseObject({
  type: z.string(),
  thread_id: z.string().optional(),
  item: z
    .looseObject({
      type: z.string(),
      text: z.string().optional(),
      message: z.string().optional(),
      command: z.string().optional(),
      exit_code: z.number().nullable().optional(),
    })
    .optional(),
});

/** A parsed `codex exec --json` event. */
export type CodexEvent = z.infer<typeof codexEvent>;

/** A finished `codex exec` run. */
export interface CodexRun extends ProcessResult {
  /** Every stdout line parsed as a `--json` event. */
  events: CodexEvent[];
  /** The `-C` working directory the shell tool ran in. */
  workdir: string;
  /** The run's CODEX_HOME (its config.toml and, unless `--ephemeral`, its recorded sessions). */
  home: string;
}

/** Options of `runCodexExec`. */
export interface CodexExecOptions {
  /** Deltagate's base URL including `/v1`, e.g. `http://127.0.0.1:PORT/v1`. */
  baseUrl: string;
  prompt: string;
  /** Kill Codex after this many ms. */
  timeoutMs: number;
  /** Record the session in CODEX_HOME (no `--ephemeral`), so a later run can resume it. */
  keepSession?: boolean;
  /**
   * `codex exec resume --last` instead of a new session: the session `earlier` recorded (it ran
   * with `keepSession`), in its CODEX_HOME and working directory (Codex picks the newest session
   * of the working directory).
   */
  resume?: CodexRun;
  /** Extra lines for the `[model_providers.deltagate]` table (e.g. `http_headers = { … }`). */
  providerSettings?: readonly string[];
  /** The model Codex asks for, one of test/fixtures/codex/model-catalog.json's (default `deltagate-sim`). */
  model?: string;
}

/** The template's model line, which `model` replaces. */
const DEFAULT_MODEL_LINE = 'model = "deltagate-sim"';

/**
 * The CODEX_HOME config.toml for `baseUrl`.
 * @throws {Error} when the template no longer has the placeholders it is filled through.
 */
export function codexConfig(
  baseUrl: string,
  providerSettings: readonly string[] = [],
  model = "deltagate-sim",
): string {
  const template = readFileSync(join(REPO_ROOT, "test/fixtures/codex/config.toml.template"), "utf8");
  if (
    !template.includes("http://127.0.0.1:PORT/v1") ||
    !template.includes("/ABS/PATH/") ||
    !template.startsWith(`${DEFAULT_MODEL_LINE}\n`)
  ) {
    throw new Error(
      "config.toml.template lost its `http://127.0.0.1:PORT/v1` or `/ABS/PATH/` placeholder or its first line, the model",
    );
  }
  const filled = template
    .replace(DEFAULT_MODEL_LINE, `model = ${JSON.stringify(model)}`)
    .replace("http://127.0.0.1:PORT/v1", baseUrl)
    .replace("/ABS/PATH/", `${REPO_ROOT}/`)
    .trimEnd();
  // The template ends inside [model_providers.deltagate], so these keys land in that table.
  return `${filled}\n${[...TEST_PROVIDER_SETTINGS, ...providerSettings].join("\n")}\n`;
}

/**
 * Runs `codex exec --json --sandbox workspace-write` in a fresh temp working directory with a
 * fresh CODEX_HOME (or, with `resume`, `codex exec … resume --last` in the earlier run's), stdin
 * on /dev/null, and the local dev key in `LOCAL_API_KEY` (the template's `env_key`). Inherited
 * `OPENAI_*` variables are dropped so nothing but the config steers it.
 * @returns the exit status, output and parsed events; the caller removes nothing (see `cleanup`,
 *   which removes the directories of the first run and of every run that resumed it).
 */
export async function runCodexExec(options: CodexExecOptions): Promise<CodexRun & { cleanup(): void }> {
  const earlier = options.resume;
  const root = earlier ? dirname(earlier.home) : mkdtempSync(join(tmpdir(), "deltagate-codex-"));
  const home = join(root, "home");
  const workdir = join(root, "work");
  if (!earlier) {
    mkdirSync(home);
    mkdirSync(workdir);
  }
  writeFileSync(
    join(home, "config.toml"),
    codexConfig(options.baseUrl, options.providerSettings, options.model),
  );
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith("OPENAI_") && !name.startsWith("CODEX_")) env[name] = value;
  }
  env.CODEX_HOME = home;
  env.LOCAL_API_KEY = LOCAL_DEV_KEY;
  // `exec`'s own options go before `resume`, which has no `-C` or `--sandbox` of its own.
  const args = [
    CODEX_BIN,
    "exec",
    "-C",
    workdir,
    "--sandbox",
    "workspace-write",
    ...(earlier ? ["resume", "--last"] : []),
    "--skip-git-repo-check",
    ...(options.keepSession || earlier ? [] : ["--ephemeral"]),
    "--json",
    "--strict-config",
    options.prompt,
  ];
  // Run the wrapper with this Node (its `#!/usr/bin/env node` might find an older one).
  const result = await runProcess(process.execPath, args, {
    cwd: workdir,
    env,
    timeoutMs: options.timeoutMs,
  });
  const events = result.stdout
    .split("\n")
    .filter((line) => line.trim().startsWith("{"))
    .map((line) => codexEvent.parse(JSON.parse(line)));
  return {
    ...result,
    events,
    workdir,
    home,
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}
