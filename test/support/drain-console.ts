/**
 * Setup file of the `workers` project: each file ends only once the Worker's console has been
 * quiet for `QUIET_MS`. The Worker logs after a test has what it waited for (a turn's log line
 * follows its terminal event; a closed socket's queued work ends later), and Vitest 4 fails a green
 * run when a console call is still in flight as it closes a pool worker
 * (https://github.com/vitest-dev/vitest/issues/11153: "Closing rpc while onUserConsoleLog was
 * pending"). Waiting here lets such a log reach Vitest before the next file or the teardown.
 * Invariant: it never changes what a test sees; it only waits, at most `MAX_WAIT_MS`.
 */
import { afterAll } from "vitest";

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

afterAll(async () => {
  const deadline = Date.now() + MAX_WAIT_MS;
  while (Date.now() - lastLog < QUIET_MS && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
});
