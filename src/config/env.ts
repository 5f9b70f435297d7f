/**
 * The Worker's bindings and variables, as declared in wrangler.toml, .dev.vars and secrets.
 * Every value arrives as an untrusted string; `parseConfig` turns them into a typed `Config`. The
 * setting variables are declared once, in the configuration schema (schema.ts), and typed here
 * from its names; the session Durable Object namespace binding (`SESSIONS`) is typed where its
 * class lives (src/session/session-do.ts `SessionEnv`), so this layer imports nothing above it.
 * Source: https://developers.cloudflare.com/workers/configuration/environment-variables/
 */
import type { DeprecatedName, SettingName } from "./schema.ts";

/** Raw environment of the Worker and of each session Durable Object. */
export type Env = {
  /** Secret bindings named by `UPSTREAMS[].api_key_var` are read by name. */
  [binding: string]: unknown;
  /** Workers Static Assets binding (`[assets]` in wrangler.toml): the demo page, public/demo/. */
  ASSETS?: Fetcher;
  /** Workers AI binding (`[ai] binding = "AI"` in wrangler.toml), for the llama-guard classifier. */
  AI?: { run(model: string, inputs: Record<string, unknown>): Promise<unknown> };
} & {
  /** Every setting of the schema (docs/configuration.md), and the deprecated names still read. */
  [name in SettingName | DeprecatedName]?: string;
};
