/**
 * The benchmark's settings, all from the environment (bench/README.md lists them), validated once,
 * and which scenarios each profile runs (`BENCH_SCENARIOS` or the profile's defaults).
 * Owns the defaults, chosen to keep the default run near 10 minutes on 2 idle cores (bench/README.md
 * "Duration": the floor comparison and its load steps push it past that).
 */
import { z } from "zod";
import { GATEWAY_IDS } from "./gateways.ts";
import { DEFAULT_LINK } from "./link-spec.ts";
import { PROFILE_IDS, type ProfileDef, type ProfileId } from "./profiles.ts";
import { SCENARIO_IDS, type ScenarioId } from "./scenarios.ts";

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

const SCENARIO_BY_LOWER = new Map<string, ScenarioId>(SCENARIO_IDS.map((id) => [id.toLowerCase(), id]));

/** One `BENCH_SCENARIOS` entry: a scenario for every selected profile, or (`profile/ID`) for one. */
export interface ScenarioChoice {
  profile: ProfileId | null;
  id: ScenarioId;
}

const scenarioChoice = z.string().transform((entry, ctx): ScenarioChoice => {
  const slash = entry.indexOf("/");
  const profileName = slash < 0 ? null : entry.slice(0, slash).trim().toLowerCase();
  const profile = PROFILE_IDS.find((id) => id === profileName) ?? null;
  const name = entry.slice(slash + 1).trim();
  const id = SCENARIO_BY_LOWER.get(name.toLowerCase());
  if (profileName !== null && profile === null) {
    ctx.addIssue({
      code: "custom",
      message: `${entry}: no profile ${profileName} (${PROFILE_IDS.join(", ")})`,
    });
  } else if (!id) {
    ctx.addIssue({ code: "custom", message: `${entry}: no such scenario (${SCENARIO_IDS.join(", ")})` });
  }
  return { profile, id: id ?? "A" };
});

const envSchema = z.object({
  BENCH_ROUNDS: z.coerce.number().int().min(1).max(50).default(2),
  BENCH_SECONDARY_ROUNDS: z.coerce.number().int().min(1).max(50).default(1),
  BENCH_TURNS: z.coerce.number().int().min(2).max(100).default(30),
  BENCH_WARMUP_TURNS: z.coerce.number().int().min(2).max(100).default(2),
  BENCH_PROFILES: list(PROFILE_IDS, (s) => s.toLowerCase()).default([...PROFILE_IDS]),
  BENCH_SCENARIOS: z
    .string()
    .transform((s) =>
      s
        .split(",")
        .map((x) => x.trim())
        .filter((x) => x !== ""),
    )
    .pipe(z.array(scenarioChoice))
    .optional(),
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

/**
 * The scenarios a profile runs: the `BENCH_SCENARIOS` entries for it (`ID` or `profile/ID`), or
 * its defaults when none is; A, the baseline every ratio is computed against, always; in
 * SCENARIO_IDS order.
 */
export function scenariosFor(
  def: Pick<ProfileDef, "id" | "defaultScenarios">,
  choices: readonly ScenarioChoice[] | undefined,
): ScenarioId[] {
  const own = (choices ?? []).filter((c) => c.profile === null || c.profile === def.id).map((c) => c.id);
  const chosen = new Set<ScenarioId>(own.length > 0 ? own : def.defaultScenarios);
  chosen.add("A");
  return SCENARIO_IDS.filter((id) => chosen.has(id));
}
