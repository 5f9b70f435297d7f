/**
 * The benchmark's simulator process (started by simulator-process.ts): one reference simulator
 * with the options passed as JSON in argv[2], so the provider's side of every scenario — above
 * all its permessage-deflate and JSON work against a direct client (E) — runs on a thread of its
 * own, not on the measuring client's. Prints one line `{"port":N}` on stdout once it listens.
 * Owns nothing but the simulator: it exits on SIGTERM/SIGINT and when its stdin ends (the
 * benchmark's process is gone), so it never outlives the run.
 */
import { type SimulatorOptions, startSimulator } from "../simulator/server.ts";

const options = JSON.parse(process.argv[2] ?? "{}") as SimulatorOptions;
const simulator = await startSimulator(options);
process.stdout.write(`${JSON.stringify({ port: simulator.port })}\n`);

let stopping = false;
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  simulator.close().finally(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.stdin.on("end", stop);
process.stdin.on("error", stop);
process.stdin.resume();
