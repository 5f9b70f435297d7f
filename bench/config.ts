/**
 * The benchmark's settings, all from the environment (bench/README.md lists them), validated once.
 * Owns the defaults, chosen to keep the default run near 10 minutes on 2 idle cores (bench/README.md
 * "Duration": the floor comparison and its load steps push it past that).
 */
import { z } from "zod";
import { GATEWAY_IDS } from "./gateways.ts";
import { DEFAULT_LINK } from "./link-spec.ts";
import { PROFILE_IDS } from "./profiles.ts";
import { SCENARIO_IDS } from "./scenarios.ts";

const list = <T extends string>(values: readonly [T, ...T[]], normalize: (s: string) => string) =>
  z
    .string()
    .transform((s) =>
      s
        .split(",")
        .map((x) => normalize(x.trim()))
        .filter((x) => x !== ""),
    )
    .pipe(z.array(z.enum(values)));

const flag = z.enum(["0", "1"]).transform((v) => v === "1");

const SCENARIO_BY_LOWER = new Map<string, string>(SCENARIO_IDS.map((id) => [id.toLowerCase(), id]));

const envSchema = z.object({
  BENCH_ROUNDS: z.coerce.number().int().min(1).max(50).default(2),
  BENCH_SECONDARY_ROUNDS: z.coerce.number().int().min(1).max(50).default(1),
  BENCH_TURNS: z.coerce.number().int().min(2).max(100).default(30),
  BENCH_WARMUP_TURNS: z.coerce.number().int().min(2).max(100).default(2),
  BENCH_PROFILES: list(PROFILE_IDS, (s) => s.toLowerCase()).default([...PROFILE_IDS]),
  BENCH_SCENARIOS: list(SCENARIO_IDS, (s) => SCENARIO_BY_LOWER.get(s.toLowerCase()) ?? s).optional(),
  BENCH_RECONNECT_EVERY: z.coerce.number().int().min(1).max(100).default(5),
  BENCH_LINK: z.string().default(DEFAULT_LINK),
  BENCH_LOAD_SESSIONS: z
    .string()
    .default("1000")
    .transform((s) =>
      s
        .split(",")
        .map((x) => x.trim())
        .filter((x) => x !== "" && x !== "0")
        .map(Number),
    )
    .pipe(z.array(z.number().int().min(1).max(10_000))),
  BENCH_LOAD_TURNS: z.coerce.number().int().min(2).max(20).default(3),
  BENCH_LOAD_GATEWAYS: list(GATEWAY_IDS, (s) => s.toLowerCase()).default(["deltagate", "floor"]),
  BENCH_LOAD_PATHS: list(["proxy", "runtime"], (s) => s.toLowerCase()).default(["proxy", "runtime"]),
  BENCH_WS_DEFLATE: flag.default(true),
  BENCH_TIMING: flag.default(true),
  BENCH_RESULTS_DIR: z.string().optional(),
  BENCH_README: z.enum(["auto", "0", "1"]).default("auto"),
  BENCH_VERBOSE: flag.default(false),
  BENCH_STORAGE: z.enum(["tmpfs", "disk"]).default("tmpfs"),
});

/** The parsed settings. */
export type BenchConfig = z.infer<typeof envSchema>;

/**
 * Parses the environment.
 * @throws {Error} naming the first bad variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv): BenchConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${issue?.path.join(".") ?? "BENCH_*"}: ${issue?.message ?? "invalid"}`);
  }
  return parsed.data;
}

/** True when the run uses the default matrix and workload (then it may rewrite the README block). */
export function isDefaultRun(env: NodeJS.ProcessEnv): boolean {
  const shaping = [
    "BENCH_ROUNDS",
    "BENCH_SECONDARY_ROUNDS",
    "BENCH_TURNS",
    "BENCH_PROFILES",
    "BENCH_SCENARIOS",
    "BENCH_RECONNECT_EVERY",
    "BENCH_LINK",
    "BENCH_LOAD_SESSIONS",
    "BENCH_LOAD_TURNS",
    "BENCH_LOAD_GATEWAYS",
    "BENCH_LOAD_PATHS",
    "BENCH_WS_DEFLATE",
    "BENCH_RESULTS_DIR",
    "BENCH_STORAGE",
  ];
  return shaping.every((name) => env[name] === undefined || env[name] === "");
}
