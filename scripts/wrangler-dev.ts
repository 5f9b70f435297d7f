/**
 * The `wrangler dev` process of a local stack (scripts/local-stack.ts spawns it in its own process
 * group): wrangler's dev server, started through its `startWorker` API rather than the `wrangler
 * dev` command (in wrangler 4.164 both run the same `DevEnv`), because only the API can leave the
 * runtime's devtools inspector off.
 * Why off by default: with an inspector, wrangler's dev proxy holds a devtools session on the
 * runtime for as long as it runs (`templates/startDevWorker/InspectorProxyWorker.ts`), so every
 * `console.log` of the Worker is also a devtools event: the runtime serializes it, the proxy posts
 * it to wrangler's Node process as an HTTP request and keeps it in a buffer that only a devtools
 * window drains. Deltagate logs one line per turn (docs/observability.md); on a two-core machine
 * the inspector cost 1.6 ms of each turn's latency and 0.5 ms of the runtime's CPU
 * (docs/benchmarks.md, "a fifth pass"). A deployment has no inspector. Without it the Worker's logs
 * still reach the terminal: workerd writes them to its standard output, where wrangler reads and
 * prints them.
 * Invariant: it exits once wrangler's server has stopped (SIGTERM, SIGINT, SIGHUP), and with a
 * non-zero status, its error on standard error, when the server cannot start.
 * Usage: node scripts/wrangler-dev.ts '<WranglerDevOptions as JSON>'
 */
import { unstable_startWorker } from "wrangler";

/** What local-stack.ts passes, as one JSON argument. */
export interface WranglerDevOptions {
  /** The wrangler configuration file. */
  config: string;
  /** The dotenv file of the Worker's variables (wrangler's `--env-file`). */
  envFile: string;
  /** Where the Durable Objects' state is kept (wrangler's `--persist-to`). */
  persistTo: string;
  port: number;
  /** Rebuild and restart on a source change (the `wrangler dev` command always does). */
  watch: boolean;
  /** The devtools inspector's port (0: any free one), or null for no inspector. */
  inspectorPort: number | null;
}

/** Parses the JSON argument, or throws naming what is wrong with it. */
function parseWranglerDevOptions(json: string | undefined): WranglerDevOptions {
  if (json === undefined) throw new Error("usage: node scripts/wrangler-dev.ts '<options as JSON>'");
  const value = JSON.parse(json) as Partial<WranglerDevOptions>;
  const { config, envFile, persistTo, port, watch, inspectorPort } = value;
  if (typeof config !== "string" || typeof envFile !== "string" || typeof persistTo !== "string") {
    throw new Error("config, envFile and persistTo must be paths");
  }
  if (typeof port !== "number" || typeof watch !== "boolean") {
    throw new Error("port must be a number and watch a boolean");
  }
  if (inspectorPort !== null && typeof inspectorPort !== "number") {
    throw new Error("inspectorPort must be a port number or null");
  }
  return { config, envFile, persistTo, port, watch, inspectorPort };
}

async function main(): Promise<void> {
  const options = parseWranglerDevOptions(process.argv[2]);
  const worker = await unstable_startWorker({
    config: options.config,
    envFiles: [options.envFile],
    dev: {
      server: { hostname: "127.0.0.1", port: options.port },
      inspector:
        options.inspectorPort === null ? false : { hostname: "127.0.0.1", port: options.inspectorPort },
      persist: options.persistTo,
      watch: options.watch,
    },
  });
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    void worker.dispose().finally(() => process.exit(0));
  };
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.once(signal, stop);
  await worker.ready;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
