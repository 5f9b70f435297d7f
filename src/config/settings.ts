/**
 * The names of the Worker's settings: every variable `parseConfig` reads (the configuration
 * schema's, current and deprecated), and the secrets the routing table names. Local tooling
 * (`npm start`) forwards exactly these to the Worker, so a setting cannot be documented, parsed
 * and yet unreachable locally.
 * Invariant: `SETTING_NAMES` is the schema's names (schema.ts), so it cannot drift from it.
 */
import { isRecord } from "../protocol/json.ts";
import { DEPRECATED_SETTINGS, type DeprecatedName, SETTINGS, type SettingName } from "./schema.ts";

/** Every setting variable of the Worker: the current ones in the docs' order, then the deprecated ones. */
export const SETTING_NAMES: readonly (SettingName | DeprecatedName)[] = [
  ...(Object.keys(SETTINGS) as SettingName[]),
  ...(Object.keys(DEPRECATED_SETTINGS) as DeprecatedName[]),
];

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
