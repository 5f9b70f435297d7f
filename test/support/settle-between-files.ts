/**
 * Setup file of the `workers` project: no file leaves a call to Vitest in flight when it ends.
 * Vitest 4 fails a green run when a pool worker closes while such a call is pending
 * (https://github.com/vitest-dev/vitest/issues/11153: "Closing rpc while onUserConsoleLog was
 * pending"; seen here also as "… while "resolve" was pending"). Two kinds of the Worker's work
 * outlive the test that started them:
 * - a log line: a turn's follows its terminal event, a closed socket's queued work ends later —
 *   each file ends only once the console has been quiet for `QUIET_MS`;
 * - the tokenizer's lazy import (src/context/tokenizer.ts), which a session may start in the
 *   background — each file starts with it loaded (`isolate: false`: once per pool worker), so
 *   no import is ever pending at a file's end.
 * Invariant: it never changes what a test sees; it only loads early and waits, at most
 * `MAX_WAIT_MS`.
 */
import { afterAll, beforeAll } from "vitest";
import { loadTokenizer } from "../../src/context/tokenizer.ts";

const QUIET_MS = 250;
const MAX_WAIT_MS = 5_000;
const METHODS = ["log", "info", "warn", "error", "debug"] as const;

let lastLog = 0;
for (const method of METHODS) {
  const original = console[method].bind(console);
  console[method] = (...args: unknown[]) => {
    lastLog = Date.now();
    original(...args);
  };
}

beforeAll(async () => {
  await loadTokenizer();
});

afterAll(async () => {
  const deadline = Date.now() + MAX_WAIT_MS;
  while (Date.now() - lastLog < QUIET_MS && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
});
