/**
 * The stack every end-to-end test file runs against: `npm start`'s local stack (simulator +
 * `wrangler dev` on a frozen snapshot, random ports) behind a recording proxy, started once per
 * file in `beforeAll` and stopped in `afterAll`.
 * A stack that fails to start fails every test of the file with the reason (wrangler's output),
 * rather than failing the hook, which Vitest reports as "skipped" tests.
 */
import { afterAll, beforeAll } from "vitest";
import { type LocalStack, startLocalStack } from "../../scripts/local-stack.ts";
import { type RecordingProxy, startRecordingProxy } from "./e2e-proxy.ts";

/** The running stack and proxy (valid inside tests, after `beforeAll`). */
export interface ProxiedStack {
  readonly stack: LocalStack;
  readonly proxy: RecordingProxy;
}

/**
 * Registers the file's `beforeAll`/`afterAll` and returns accessors for the stack and proxy.
 * @param vars extra variables for the Worker (e.g. a short `KEEPALIVE_MS`).
 */
export function useProxiedStack(vars: Record<string, string> = {}): ProxiedStack {
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
  const started = <T>(value: T | undefined, what: string): T => {
    if (setupError !== undefined) {
      const reason = setupError instanceof Error ? setupError.message : String(setupError);
      throw new Error(`The local stack did not start: ${reason}`, { cause: setupError });
    }
    if (!value) throw new Error(`the ${what} is not started (use it inside a test)`);
    return value;
  };
  return {
    get stack() {
      return started(stack, "stack");
    },
    get proxy() {
      return started(proxy, "proxy");
    },
  };
}
