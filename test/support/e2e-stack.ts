/**
 * The stack every end-to-end test file runs against: `npm start`'s local stack (simulator +
 * `wrangler dev` on a frozen snapshot, random ports) behind a recording proxy of the file's own.
 * - `useSharedStack()`: the one stack of the `node` project with `npm start`'s default settings,
 *   started once for the run (test/support/shared-stack-setup.ts) and shared by every file that
 *   needs no settings of its own. Such a file uses sessions, tenants, keys and markers of its own,
 *   never clears or lists the whole simulator recorder (test/support/sim-recorder.ts), and changes
 *   nothing another file could see (docs/testing.md "Shared stacks").
 * - `useProxiedStack(vars)`: a stack of the file's own with extra settings, started in `beforeAll`
 *   and stopped in `afterAll`.
 * The recording proxy is always the file's own, so what it recorded is the file's alone.
 * A stack that fails to start fails every test of the file with the reason (wrangler's output),
 * rather than failing the hook, which Vitest reports as "skipped" tests.
 */
import { afterAll, beforeAll, inject } from "vitest";
import { type LocalStack, startLocalStack } from "../../scripts/local-stack.ts";
import { type RecordingProxy, startRecordingProxy } from "./e2e-proxy.ts";
import type { SharedStackInfo } from "./shared-stack-setup.ts";

/** A file's own running stack and proxy (valid inside tests, after `beforeAll`). */
export interface ProxiedStack {
  readonly stack: LocalStack;
  readonly proxy: RecordingProxy;
}

/** The shared stack, as a file sees it: where it is, and wrangler's output. */
export interface SharedStack extends SharedStackInfo {
  /** The tail of wrangler's output (for diagnostics). */
  output(): Promise<string>;
}

/** The shared stack and the file's own proxy to it (valid inside tests, after `beforeAll`). */
export interface SharedProxiedStack {
  readonly stack: SharedStack;
  readonly proxy: RecordingProxy;
}

/** Throws the start's failure, or a misuse outside a test; else returns `value`. */
function started<T>(value: T | undefined, what: string, setupError: unknown): T {
  if (setupError !== undefined) {
    const reason = setupError instanceof Error ? setupError.message : String(setupError);
    throw new Error(`The local stack did not start: ${reason}`, { cause: setupError });
  }
  if (!value) throw new Error(`the ${what} is not started (use it inside a test)`);
  return value;
}

/** Registers the file's `beforeAll`/`afterAll`: the shared stack, and a proxy of its own to it. */
export function useSharedStack(): SharedProxiedStack {
  let stack: SharedStack | undefined;
  let proxy: RecordingProxy | undefined;
  let setupError: unknown;
  beforeAll(async () => {
    try {
      const broker = inject("sharedStackBroker");
      if (!broker) {
        throw new Error(
          "no shared stack here: the node project's globalSetup (shared-stack-setup.ts) starts it",
        );
      }
      const answer = (await (await fetch(`${broker}/stack`)).json()) as SharedStackInfo | { error: string };
      if ("error" in answer) throw new Error(answer.error);
      const output = async () =>
        ((await (await fetch(`${broker}/output`)).json()) as { output: string }).output;
      stack = { ...answer, output };
      proxy = await startRecordingProxy(stack.origin);
    } catch (error) {
      setupError = error;
    }
  });
  afterAll(async () => {
    await proxy?.close();
  });
  return {
    get stack() {
      return started(stack, "stack", setupError);
    },
    get proxy() {
      return started(proxy, "proxy", setupError);
    },
  };
}

/**
 * Registers the file's `beforeAll`/`afterAll` for a stack of its own and returns accessors for
 * the stack and proxy. A file with `npm start`'s default settings uses `useSharedStack` instead.
 * @param vars extra variables for the Worker (e.g. a short `KEEPALIVE_MS`).
 */
export function useProxiedStack(vars: Record<string, string>): ProxiedStack {
  let stack: LocalStack | undefined;
  let proxy: RecordingProxy | undefined;
  let setupError: unknown;
  beforeAll(async () => {
    try {
      stack = await startLocalStack({ port: 0, simulatorPort: 0, verbose: false, snapshot: true, vars });
      proxy = await startRecordingProxy(stack.origin);
    } catch (error) {
      setupError = error;
    }
  });
  afterAll(async () => {
    await proxy?.close();
    await stack?.stop();
  });
  return {
    get stack() {
      return started(stack, "stack", setupError);
    },
    get proxy() {
      return started(proxy, "proxy", setupError);
    },
  };
}
