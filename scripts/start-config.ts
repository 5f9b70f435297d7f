/**
 * What `npm start` takes from its environment and what it tells the user. Owns the rule that every
 * setting the Worker reads (src/config/settings.ts) reaches it from `npm start`'s environment, and
 * the exact demo command for the stack that is running.
 */
import { routeSecretNames, SETTING_NAMES } from "../src/config/settings.ts";

/** The demo's defaults (scripts/demo.ts): what needs no variable on its command line. */
const DEMO_DEFAULTS = {
  url: "http://127.0.0.1:8787/v1",
  model: "deltagate-sim",
} as const;

/**
 * The Worker variables set in `env`: every setting of the configuration schema, plus
 * the secrets `UPSTREAMS` names in `api_key_var`. Unset variables are left out (the Worker's
 * defaults, or `npm start`'s, apply); set ones are passed as they are, even empty.
 */
export function forwardedSettings(env: NodeJS.ProcessEnv): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const name of [...SETTING_NAMES, ...routeSecretNames(env.UPSTREAMS)]) {
    const value = env[name];
    if (value !== undefined) vars[name] = value;
  }
  return vars;
}

/** What the demo needs to know about the running stack. */
export interface DemoTarget {
  /** `http://127.0.0.1:PORT/v1`. */
  baseUrl: string;
  /** True when `DELTAGATE_API_KEYS` replaced the local development key. */
  customKeys: boolean;
  /** The model the demo should ask for (the first advertised one). */
  model: string;
}

/**
 * The command that runs the demo against this stack: `npm run demo`, preceded by the variables
 * (`DELTAGATE_URL`, `DELTAGATE_API_KEY`, `MODEL`) whose defaults do not fit. A custom key is
 * shown as a placeholder, never printed.
 */
export function demoCommand(target: DemoTarget): string {
  const vars: string[] = [];
  if (target.baseUrl !== DEMO_DEFAULTS.url) vars.push(`DELTAGATE_URL=${target.baseUrl}`);
  if (target.customKeys) vars.push("DELTAGATE_API_KEY=<one of your DELTAGATE_API_KEYS keys>");
  if (target.model !== DEMO_DEFAULTS.model) vars.push(`MODEL=${target.model}`);
  return [...vars, "npm run demo"].join(" ");
}
