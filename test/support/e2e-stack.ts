/**
 * The stack every end-to-end test file runs against: `npm start`'s local stack (simulator +
 * `wrangler dev` on a frozen snapshot, random ports) behind a recording proxy, started once per
 * file in `beforeAll` and stopped in `afterAll`.
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
  beforeAll(async () => {
    stack = await startLocalStack({ port: 0, simulatorPort: 0, verbose: false, snapshot: true, vars });
    proxy = await startRecordingProxy(stack.origin);
  });
  afterAll(async () => {
    await proxy?.close();
    await stack?.stop();
  });
  return {
    get stack() {
      if (!stack) throw new Error("the stack is not started (use it inside a test)");
      return stack;
    },
    get proxy() {
      if (!proxy) throw new Error("the proxy is not started (use it inside a test)");
      return proxy;
    },
  };
}
