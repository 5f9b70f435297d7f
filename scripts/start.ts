/**
 * `npm start`: Deltagate on http://127.0.0.1:8787 (PORT overrides) with the embedded reference
 * simulator as its upstream on 127.0.0.1:8788 (SIM_PORT overrides). Every setting of docs/configuration.md's
 * table is taken from this process's environment (scripts/start-config.ts); setting
 * UPSTREAM_BASE_URL (with UPSTREAM_API_KEY, MODELS) switches to a real model server instead of the
 * simulator; no account or key is needed otherwise. Durable Object state persists in
 * .wrangler/state (DELTAGATE_STATE_DIR overrides), beside the stack's own random secrets
 * (scripts/local-secrets.ts); only the stack's own origins may call it unless CORS_ALLOWED_ORIGINS
 * says otherwise (scripts/local-stack.ts). INSPECTOR_PORT attaches wrangler's devtools inspector
 * there (none by default: scripts/wrangler-dev.ts).
 * Owns the stack's lifetime: Ctrl-C (SIGINT), SIGTERM and SIGHUP stop wrangler, every workerd and
 * the simulator; so does the death of the parent process (`npm` does not pass SIGTERM on through
 * its `sh -c`), so nothing is left holding the ports.
 */
import { join } from "node:path";
import { LOCAL_DEV_KEY, REPO_ROOT, startLocalStack } from "./local-stack.ts";
import { demoCommand, forwardedSettings } from "./start-config.ts";

/** How often the parent-death watchdog looks at `process.ppid`, in ms. */
const PARENT_POLL_MS = 1_000;

/** `INSPECTOR_PORT` as a port number, or an error naming it. */
function inspectorPort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new Error(`INSPECTOR_PORT must be a port number (1-65535), not ${JSON.stringify(value)}`);
  }
  return port;
}

const settings = forwardedSettings(process.env);
let stack: Awaited<ReturnType<typeof startLocalStack>>;
try {
  stack = await startLocalStack({
    port: Number(process.env.PORT ?? 8787),
    simulatorPort: Number(process.env.SIM_PORT ?? 8788),
    upstreamBaseUrl: settings.UPSTREAM_BASE_URL,
    vars: settings,
    verbose: true,
    persistTo: process.env.DELTAGATE_STATE_DIR ?? join(REPO_ROOT, ".wrangler", "state"),
    ...(process.env.INSPECTOR_PORT ? { inspectorPort: inspectorPort(process.env.INSPECTOR_PORT) } : {}),
  });
} catch (error) {
  console.error(`\nnpm start failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}

const upstream = stack.simulator
  ? `${stack.simulator.url}/v1 (reference simulator, not a model)`
  : settings.UPSTREAM_BASE_URL;
const demo = demoCommand({
  baseUrl: stack.baseUrl,
  customKeys: settings.DELTAGATE_API_KEYS !== undefined,
  model: stack.models[0] ?? "deltagate-sim",
});
console.log(
  `\nDeltagate is up: ${stack.baseUrl}  (WebSocket: ${stack.baseUrl.replace(/^http/, "ws")}/responses)`,
);
console.log(`Upstream: ${settings.UPSTREAMS ? "the UPSTREAMS routing table" : upstream}`);
console.log(
  `API key: ${settings.DELTAGATE_API_KEYS !== undefined ? "(from DELTAGATE_API_KEYS)" : LOCAL_DEV_KEY}`,
);
if (settings.DELTAGATE_API_KEYS === undefined) {
  console.log(
    `Client secrets (development only, the demo page's own origin): curl -X POST ${stack.origin}/demo/client_secret -H 'origin: ${stack.origin}' -H 'content-type: application/json'`,
  );
  console.log(`Web agent page (development only): ${stack.origin}/demo/`);
}
if (process.env.INSPECTOR_PORT) {
  console.log(
    `Devtools inspector: 127.0.0.1:${process.env.INSPECTOR_PORT} (chrome://inspect, or a debugger)`,
  );
}
console.log(`Try it: ${demo}   (Ctrl-C stops Deltagate and the simulator)\n`);

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
