/**
 * `npm start`: Deltagate on http://127.0.0.1:8787 (PORT overrides) with the embedded reference
 * simulator as its upstream on 127.0.0.1:8788 (SIM_PORT overrides). Setting UPSTREAM_BASE_URL
 * (and UPSTREAM_API_KEY, MODELS) switches to a real model server instead; no account or key is
 * needed otherwise. Durable Object state persists in .wrangler/state.
 * Owns the stack's lifetime: Ctrl-C (SIGINT), SIGTERM and SIGHUP stop wrangler, every workerd and
 * the simulator; so does the death of the parent process (`npm` does not pass SIGTERM on through
 * its `sh -c`), so nothing is left holding the ports.
 */
import { join } from "node:path";
import { LOCAL_DEV_KEY, REPO_ROOT, startLocalStack } from "./local-stack.ts";

/** How often the parent-death watchdog looks at `process.ppid`, in ms. */
const PARENT_POLL_MS = 1_000;

let stack: Awaited<ReturnType<typeof startLocalStack>>;
try {
  stack = await startLocalStack({
    port: Number(process.env.PORT ?? 8787),
    simulatorPort: Number(process.env.SIM_PORT ?? 8788),
    upstreamBaseUrl: process.env.UPSTREAM_BASE_URL,
    upstreamApiKey: process.env.UPSTREAM_API_KEY,
    apiKeys: process.env.DELTAGATE_API_KEYS,
    vars: process.env.MODELS ? { MODELS: process.env.MODELS } : {},
    verbose: true,
    persistTo: join(REPO_ROOT, ".wrangler", "state"),
  });
} catch (error) {
  console.error(`\nnpm start failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}

const upstream = stack.simulator
  ? `${stack.simulator.url}/v1 (reference simulator, not a model)`
  : process.env.UPSTREAM_BASE_URL;
console.log(
  `\nDeltagate is up: ${stack.baseUrl}  (WebSocket: ${stack.baseUrl.replace(/^http/, "ws")}/responses)`,
);
console.log(`Upstream: ${upstream}`);
console.log(`API key: ${process.env.DELTAGATE_API_KEYS ? "(from DELTAGATE_API_KEYS)" : LOCAL_DEV_KEY}`);
console.log("Try it: npm run demo   (Ctrl-C stops Deltagate and the simulator)\n");

let shuttingDown = false;
const shutdown = async (why: string) => {
  if (shuttingDown) return;
  shuttingDown = true;
  console.log(`\n${why}: stopping Deltagate…`);
  await stack.stop();
  process.exit(0);
};
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => void shutdown(signal));
}
// Reparenting means whoever started us is gone (e.g. `kill <npm pid>`): stop rather than orphan.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) void shutdown("parent process exited");
}, PARENT_POLL_MS);
