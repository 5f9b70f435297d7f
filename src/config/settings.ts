/**
 * The names of the Worker's settings: every variable `parseConfig` reads (docs/configuration.md's
 * configuration table), and the secrets the routing table names. Local tooling (`npm start`)
 * forwards exactly these to the Worker, so a setting cannot be documented, parsed and yet
 * unreachable locally.
 * Invariant: `SETTING_NAMES` lists every variable declared in `Env` except bindings (checked by
 * the compiler below), and nothing else.
 */
import { isRecord } from "../protocol/json.ts";
import type { Env } from "./env.ts";

/** Every setting variable of the Worker, in docs/configuration.md's order. */
export const SETTING_NAMES = [
  "DELTAGATE_API_KEYS",
  "CONTROL_SECRET",
  "ADMIN_API_KEY",
  "UPSTREAM_BASE_URL",
  "UPSTREAM_API_KEY",
  "UPSTREAM_API",
  "UPSTREAMS",
  "UPSTREAM_IDLE_MS",
  "UPSTREAM_KEEP_WARM_MS",
  "UPSTREAM_CONTEXT_WINDOW",
  "UPSTREAM_MAX_RETRIES",
  "UPSTREAM_RETRY_BASE_MS",
  "MODELS",
  "WS_MAX_CONNECTION_MS",
  "RESPONSE_RETENTION_DAYS",
  "ABANDONED_RESPONSE_GRACE_MS",
  "KEEPALIVE_MS",
  "STORE_FALSE_GRACE_MS",
  "STORE_FALSE_GRACE_MAX_MS",
  "TURN_LOG",
  "SAFETY_MODE",
  "SAFETY",
  "SAFETY_TENANTS",
  "SAFETY_RULES",
  "SAFETY_MODERATION_URL",
  "SAFETY_MODERATION_API_KEY",
  "SAFETY_MODERATION_MODEL",
  "SAFETY_LLAMA_GUARD_MODEL",
  "SAFETY_BATCH_WAIT_MS",
  "SAFETY_BATCH_MAX_TEXTS",
  "SAFETY_LOG",
  "COMPACTION_KEY",
  "CLIENT_SECRET_SIGNING_KEY",
  "ALLOW_INSECURE_API_KEY",
  "CORS_ALLOWED_ORIGINS",
  "DEMO_CLIENT_SECRET_TENANT",
] as const satisfies readonly (keyof Env)[];

/** One of `SETTING_NAMES`. */
export type SettingName = (typeof SETTING_NAMES)[number];

/** The variables declared in `Env` (without its index signature) that are not bindings. */
type DeclaredSetting = Exclude<
  keyof { [K in keyof Env as string extends K ? never : number extends K ? never : K]: Env[K] },
  "AI" | "ASSETS"
>;
/** Fails to compile, naming the variable, when `Env` declares a setting missing from the list. */
type ListsEverySetting<Missing extends never> = Missing;
export type EverySettingListed = ListsEverySetting<Exclude<DeclaredSetting, SettingName>>;

/**
 * The secret variables a `UPSTREAMS` table references (`api_key_var`), so they can be forwarded
 * too. Lenient: a table that is not valid JSON names none (the Worker reports the error itself).
 */
export function routeSecretNames(upstreams: string | undefined): string[] {
  if (!upstreams) return [];
  let routes: unknown;
  try {
    routes = JSON.parse(upstreams);
  } catch {
    return [];
  }
  if (!Array.isArray(routes)) return [];
  const names = new Set<string>();
  for (const route of routes) {
    const name: unknown = isRecord(route) ? route.api_key_var : undefined;
    if (typeof name === "string" && name.length > 0) names.add(name);
  }
  return [...names];
}
