/**
 * CLI entry of the reference simulator: `node simulator/main.ts`. Environment: SIM_PORT
 * (default 8788), SIM_HOST (default 127.0.0.1), SIM_DECODE_TPS (tokens/s, default 1000),
 * SIM_PREFILL_MS_PER_TOKEN (ms, default 0.05), SIM_FIRST_TOKEN_MS (ms, default 5), SIM_STRICT
 * (`0` = lenient validation; default strict), SIM_MODERATION_MS (moderation latency, ms,
 * default 0), SIM_MODERATION_FLAG_WORDS (comma-separated extra words `/v1/moderations` flags). Stops
 * cleanly on SIGINT/SIGTERM.
 */
import { type SimulatorOptions, startSimulator } from "./server.ts";

function envNumber(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0)
    throw new Error(`[simulator] ${name} must be a non-negative number, got '${raw}'`);
  return n;
}

const options: SimulatorOptions = {
  port: envNumber("SIM_PORT") ?? 8788,
  host: process.env.SIM_HOST || "127.0.0.1",
};
const tps = envNumber("SIM_DECODE_TPS");
if (tps !== undefined) options.decodeTokensPerSecond = tps;
const prefill = envNumber("SIM_PREFILL_MS_PER_TOKEN");
if (prefill !== undefined) options.prefillMsPerToken = prefill;
const overhead = envNumber("SIM_FIRST_TOKEN_MS");
if (overhead !== undefined) options.firstTokenOverheadMs = overhead;

const moderationMs = envNumber("SIM_MODERATION_MS");
if (moderationMs !== undefined) options.moderationLatencyMs = moderationMs;
const flagWords = process.env.SIM_MODERATION_FLAG_WORDS;
if (flagWords) options.moderationFlagWords = flagWords.split(",").map((w) => w.trim());
if (process.env.SIM_STRICT === "0") options.strict = false;

const sim = await startSimulator(options);
let stopping = false;
const stop = (signal: string): void => {
  if (stopping) return;
  stopping = true;
  console.log(`[simulator] ${signal} received, shutting down`);
  sim.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on("SIGINT", () => stop("SIGINT"));
process.on("SIGTERM", () => stop("SIGTERM"));
