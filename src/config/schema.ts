/**
 * The configuration schema: every environment setting of the Worker, declared once with its type,
 * default, range and one-line description, and parsed by the same declaration. `Config`
 * (config.ts) is built from what `parseSettings` returns, the `Env` type (env.ts) and the list
 * `npm start` forwards (settings.ts) are derived from the names, and docs/configuration.md is
 * generated from it (`npm run docs:config`, scripts/config-docs.ts; a unit test fails when the
 * committed page is out of step).
 * Deprecated names (`DEPRECATED_SETTINGS`) are declared here too, with what replaces them and the
 * release that stops reading them; config.ts reads them and warns once per isolate.
 * Invariants: an unset or empty variable takes its default; a set one is parsed strictly, and an
 * error names the variable, never its value (it may be a secret).
 * Source: https://developers.cloudflare.com/workers/configuration/environment-variables/
 */
import { z } from "zod";
import { isClientSecret } from "../auth/client-secret.ts";
import { NO_PRICES, type PriceTable, parsePrices } from "../context/turn-cost.ts";
import { parsePolicySetting, parseRulesSetting, parseTenantPolicies } from "../safety/config.ts";
import type { PolicyOverride } from "../safety/policy.ts";
import { DEFAULT_KEEP_WARM_MS, DEFAULT_UPSTREAM_IDLE_MS } from "../upstream/responses-ws/adapter.ts";
import { ROUTE_DEFAULTS, UPSTREAM_APIS } from "../upstream/routes.ts";
import { DEFAULT_MAX_ATTEMPTS } from "../webhooks/delivery.ts";
import { type PrivateTargets, parsePrivateTargets } from "../webhooks/webhook-target.ts";
import { MIN_ROOT_SECRET_CHARS } from "./root-secret.ts";
import {
  boolean,
  check,
  type DeprecatedSetting,
  integer,
  json,
  list,
  oneOf,
  type Setting,
  secret,
  text,
  url,
} from "./setting-kinds.ts";

export type { DeprecatedSetting, Setting } from "./setting-kinds.ts";

const keyPair = z
  .string()
  .regex(
    /^[^:\s]+:[A-Za-z0-9_.-]{1,64}$/,
    "each entry must be `key:tenant` (tenant: letters, digits, _ . -)",
  );

/**
 * `DELTAGATE_API_KEYS` (`key:tenant,key2:tenant2`) as key → tenant.
 * @throws {Error} naming the bad entry's index (never the key itself) when an entry is malformed.
 */
function parseApiKeys(raw: string | undefined): ReadonlyMap<string, string> {
  const keys = new Map<string, string>();
  if (!raw) return keys;
  raw
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0)
    .forEach((entry, index) => {
      if (!keyPair.safeParse(entry).success) {
        throw new Error(`DELTAGATE_API_KEYS entry #${index + 1} is not of the form key:tenant`);
      }
      const cut = entry.lastIndexOf(":");
      if (isClientSecret(entry)) {
        throw new Error(
          `DELTAGATE_API_KEYS entry #${index + 1} starts with ek_, the prefix of client secrets`,
        );
      }
      keys.set(entry.slice(0, cut), entry.slice(cut + 1));
    });
  return keys;
}

/**
 * `CORS_ALLOWED_ORIGINS`: `*` (default) or comma-separated origins, each exactly
 * `scheme://host[:port]` as browsers send it in `Origin`.
 * @throws {Error} naming the entry that is not an origin.
 */
function parseCorsOrigins(raw: string | undefined): "*" | ReadonlySet<string> {
  const value = raw?.trim() ?? "*";
  if (value === "*" || value === "") return "*";
  const origins = new Set<string>();
  for (const entry of value
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e.length > 0)) {
    let origin: string | null = null;
    try {
      origin = new URL(entry).origin;
    } catch {
      origin = null;
    }
    if (origin !== entry)
      throw new Error(`CORS_ALLOWED_ORIGINS: '${entry}' is not an origin (scheme://host[:port])`);
    origins.add(entry);
  }
  return origins;
}

/** The lifetime OpenAI gives a Responses WebSocket (WebSocket mode guide): 60 minutes, in ms. */
const DEFAULT_MAX_CONNECTION_MS = 60 * 60 * 1000;

/**
 * Default silence before a `keepalive` event, in ms: OpenAI's own figure ("we emit a keepalive
 * streaming event every 30s to keep intermediate proxies and load balancers from terminating the
 * connection", https://community.openai.com/t/200-ok-from-v1-responses-but-body-times-out-und-err-body-timeout/1371083/27;
 * Azure OpenAI's comes after about as long), well under Cloudflare's 100 s proxy idle timeout
 * (https://developers.cloudflare.com/support/troubleshooting/http-status-codes/cloudflare-5xx-errors/error-524/)
 * and Codex's 300 s stream idle timeout.
 */
export const DEFAULT_KEEPALIVE_MS = 30_000;
/** Default grace window of a closed socket's store:false state, in ms: none, as OpenAI. */
export const DEFAULT_STORE_FALSE_GRACE_MS = 0;
/** Default longest grace window a client may ask for, in ms (5 minutes). */
export const DEFAULT_STORE_FALSE_GRACE_MAX_MS = 5 * 60 * 1000;

/** Default first wait before a failed webhook delivery is retried, in ms (Standard Webhooks' first retry: 5 s). */
export const DEFAULT_WEBHOOK_RETRY_BASE_MS = 5_000;

/** The release that stops reading every deprecated name. */
export const DEPRECATED_UNTIL = "0.3";

/** Every setting, in the order of docs/configuration.md. */
export const SETTINGS = {
  DELTAGATE_API_KEYS: {
    type: "`key:tenant` list",
    range: "tenant: 1–64 of `A-Za-z0-9_.-`",
    defaultText: null,
    description:
      "API keys Deltagate accepts, each with its tenant; tenants never share sessions or responses (none: every request 401)",
    secret: true,
    parse: (raw) => parseApiKeys(raw),
  } satisfies Setting<ReadonlyMap<string, string>>,
  DELTAGATE_SECRET: secret(
    "the root secret: signs minted tenant keys, seals tenants' upstream keys, signs client secrets and seals compaction items, one derived key per purpose ([One root secret](#one-root-secret); unset: those features are off)",
    MIN_ROOT_SECRET_CHARS,
  ),
  ADMIN_API_KEY: secret(
    "the admin API's bearer token (unset: the admin API answers 404; [Admin API and CLI](tenancy.md#admin-api-and-cli))",
  ),
  UPSTREAM_BASE_URL: url(
    { description: "the default upstream, with `/v1` (`npm start`: the simulator)" },
    "https://api.openai.com/v1",
  ),
  UPSTREAM_API_KEY: secret("bearer token sent to the default upstream"),
  UPSTREAM_API: oneOf(
    UPSTREAM_APIS,
    {
      description: "wire API of the default upstream",
      defaultText: "`responses-ws` for OpenAI's endpoint, else `responses-http`",
    },
    null,
  ),
  UPSTREAMS: json(
    {
      description:
        "routing table: which upstream serves which model, in fallback order; overrides the three above ([Upstreams](upstreams.md))",
    },
    (raw) => raw,
    undefined,
  ),
  UPSTREAM_IDLE_MS: integer(
    "a warm upstream WebSocket closes this long after the last client socket closed (or its last turn)",
    { default: DEFAULT_UPSTREAM_IDLE_MS, min: 1, unit: "ms" },
  ),
  UPSTREAM_KEEP_WARM_MS: integer("…and, while a client is open, after this long without any activity", {
    default: DEFAULT_KEEP_WARM_MS,
    min: 1,
    unit: "ms",
  }),
  UPSTREAM_CONTEXT_WINDOW: integer("context window of routes without `context_window`; drives `truncation`", {
    default: ROUTE_DEFAULTS.contextWindow,
    min: 1,
    unit: "tokens",
  }),
  UPSTREAM_MAX_RETRIES: integer(
    "retries of a 429/5xx/unreachable upstream before the first event, per route",
    { default: ROUTE_DEFAULTS.maxRetries, min: 0, max: 5 },
  ),
  UPSTREAM_RETRY_BASE_MS: integer(
    "first retry delay, doubled per retry (jittered; `retry-after(-ms)` honoured)",
    { default: ROUTE_DEFAULTS.retryBaseMs, min: 0, max: 10_000, unit: "ms" },
  ),
  MODELS: list({
    description:
      "ids listed by `GET /v1/models` (wrangler.toml sets `gpt-5.1,gpt-5.1-mini`; `npm start`: `deltagate-sim`)",
  }),
  PRICES: json(
    {
      description:
        'USD per million tokens by model, `{"model": {"input", "cached_input", "cache_write", "output"}}`: each call\'s cost ([Cache tokens and cost](tenancy.md#cache-tokens-and-cost))',
      defaultText: "none: no cost",
    },
    parsePrices,
    NO_PRICES as PriceTable,
  ),
  WS_MAX_CONNECTION_MS: integer("WebSocket connection lifetime (OpenAI's: 60 minutes)", {
    default: DEFAULT_MAX_CONNECTION_MS,
    min: 1,
    unit: "ms",
  }),
  RESPONSE_RETENTION_DAYS: {
    type: "number (days)",
    range: "> 0",
    defaultText: "30",
    description: "retention of `store: true` responses",
    secret: false,
    parse: (raw, name) => check(name, z.coerce.number().positive(), raw ?? 30),
  } satisfies Setting<number>,
  ABANDONED_RESPONSE_GRACE_MS: integer(
    "a `store: true` response with no client attached is cancelled after this",
    { default: 600_000, min: 1, unit: "ms" },
  ),
  KEEPALIVE_MS: integer(
    "silence in a response's stream before a `keepalive` event (0: never); OpenAI's interval, under proxies' ~100 s",
    { default: DEFAULT_KEEPALIVE_MS, min: 0, max: 3_600_000, unit: "ms" },
  ),
  STORE_FALSE_GRACE_MS: integer(
    "a closed socket's `store: false` chain stays continuable this long unless the socket asked (0: as OpenAI)",
    { default: DEFAULT_STORE_FALSE_GRACE_MS, min: 0, unit: "ms" },
  ),
  STORE_FALSE_GRACE_MAX_MS: integer(
    "the longest grace window a socket may ask for (`x-deltagate-store-false-grace`); 0 turns the opt-in off",
    { default: DEFAULT_STORE_FALSE_GRACE_MAX_MS, min: 0, unit: "ms" },
  ),
  TURN_LOG: boolean("one JSON log line per turn with its stage timings", true),
  ALLOW_INSECURE_API_KEY: boolean(
    "accept a tenant key in the WebSocket subprotocol or `?api_key=` (refused by default: proxies log them)",
    false,
  ),
  CORS_ALLOWED_ORIGINS: {
    type: "`*` or origin list",
    range: "`scheme://host[:port]`, comma-separated",
    defaultText: "`*` (`npm start`: its own)",
    description: "origins allowed cross-origin ([CORS](browsers-and-phones.md#cors))",
    secret: false,
    parse: (raw) => parseCorsOrigins(raw),
  } satisfies Setting<"*" | ReadonlySet<string>>,
  DEMO_CLIENT_SECRET_TENANT: text(
    {
      description:
        "development only: `POST /demo/client_secret` mints without authentication for this tenant (`npm start`: `local`)",
    },
    null,
  ),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: {
    type: "`true` or origin list",
    range: "`scheme://host[:port]`, comma-separated",
    defaultText: "none (`npm start`: `true`)",
    description:
      "development only: webhook endpoints on private, loopback or link-local addresses allowed, and plain `http:` for them; every one, or these origins ([Webhooks](webhooks.md#where-a-webhook-may-go))",
    secret: false,
    parse: (raw, name) => parsePrivateTargets(raw, name),
  } satisfies Setting<PrivateTargets>,
  WEBHOOK_RETRY_BASE_MS: integer(
    "first wait before a failed webhook delivery is tried again, ×3 per attempt, at most 12 hours (jittered; `Retry-After` honoured)",
    { default: DEFAULT_WEBHOOK_RETRY_BASE_MS, min: 1, max: 3_600_000, unit: "ms" },
  ),
  WEBHOOK_MAX_ATTEMPTS: integer(
    "attempts of one webhook event before it is given up (the default fits the default backoff in OpenAI's 72 hours, never past them)",
    { default: DEFAULT_MAX_ATTEMPTS, min: 1, max: 100 },
  ),
  SAFETY: json(
    {
      description:
        "the deployment's safety policy ([Safety](safety.md): `mode`, `classifier`, `batch_wait_ms`…)",
      defaultText: "mode `parallel`, the local rules",
    },
    parsePolicySetting,
    undefined as PolicyOverride | undefined,
  ),
  SAFETY_TENANTS: json(
    {
      description: 'safety policy overrides by tenant, `{"tenant": {…}}` (the control plane\'s setting wins)',
    },
    parseTenantPolicies,
    new Map<string, PolicyOverride>() as ReadonlyMap<string, PolicyOverride>,
  ),
  SAFETY_RULES: json(
    {
      description: "the local rules classifier: PII detectors, phrases, patterns ([Safety](safety.md))",
      defaultText: "the built-in rules",
    },
    parseRulesSetting,
    parseRulesSetting(undefined, "SAFETY_RULES"),
  ),
  SAFETY_MODERATION_URL: url(
    { description: "base URL (with `/v1`) of the moderation endpoint", defaultText: "`UPSTREAM_BASE_URL`" },
    null,
  ),
  SAFETY_MODERATION_API_KEY: {
    ...secret("bearer token of the moderation endpoint"),
    defaultText: "`UPSTREAM_API_KEY` at the default URL",
  },
  SAFETY_MODERATION_MODEL: text({ description: "moderation model" }, "omni-moderation-latest"),
  SAFETY_LLAMA_GUARD_MODEL: text(
    { description: "Workers AI model of the `llama-guard` classifier (needs the `AI` binding)" },
    "@cf/meta/llama-guard-3-8b",
  ),
  SAFETY_LOG: oneOf(
    ["all", "notable", "off"],
    { description: "which turns log their safety accounting as a JSON line" },
    "notable",
  ),
} as const satisfies Record<string, Setting<unknown>>;

/** The names still read for an existing deployment, each with what replaces it. */
export const DEPRECATED_SETTINGS = {
  CONTROL_SECRET: {
    ...secret(
      "the control plane's secret; wins over `DELTAGATE_SECRET` for minted keys and sealed upstream keys",
      16,
    ),
    replacedBy:
      "`DELTAGATE_SECRET`: move the value there (if it has ≥ 32 characters) and every minted key and sealed upstream key keeps working",
    until: DEPRECATED_UNTIL,
  },
  CLIENT_SECRET_SIGNING_KEY: {
    ...secret("the signing key of client secrets; wins over `DELTAGATE_SECRET`'s", 32),
    // Read trimmed, as before the schema.
    parse: (raw: string | undefined, name: string) => secret("", 32).parse(raw?.trim() || undefined, name),
    replacedBy: "`DELTAGATE_SECRET` (client secrets live ≤ 2 hours: the switch revokes the current ones)",
    until: DEPRECATED_UNTIL,
  },
  COMPACTION_KEY: {
    ...list({ type: "secret list", secret: true, description: "keys of compaction items, current first" }),
    description:
      "keys of compaction items, current first; with `DELTAGATE_SECRET` set, they only open items sealed before",
    replacedBy: "`DELTAGATE_SECRET` (keep the old value set until no client holds items sealed with it)",
    until: DEPRECATED_UNTIL,
  },
  SAFETY_MODE: {
    ...oneOf(
      ["off", "blocking", "parallel"],
      { description: "the deployment's safety mode; wins over `SAFETY`'s `mode`" },
      null,
    ),
    replacedBy: '`mode` in `SAFETY` (`{"mode":"blocking"}`)',
    until: DEPRECATED_UNTIL,
  },
  SAFETY_BATCH_WAIT_MS: {
    ...integer("cross-session batching wait; wins over `SAFETY`'s `batch_wait_ms`", {
      default: 0,
      min: 0,
      max: 50,
      unit: "ms",
    }),
    replacedBy: "`batch_wait_ms` in `SAFETY`",
    until: DEPRECATED_UNTIL,
  },
  SAFETY_BATCH_MAX_TEXTS: {
    ...integer("cross-session batch size cap; wins over `SAFETY`'s `batch_max_texts`", {
      default: 32,
      min: 1,
      max: 256,
      unit: "texts",
    }),
    replacedBy: "`batch_max_texts` in `SAFETY`",
    until: DEPRECATED_UNTIL,
  },
} as const satisfies Record<string, DeprecatedSetting<unknown>>;

/** The name of a current setting. */
export type SettingName = keyof typeof SETTINGS;
/** The name of a deprecated setting. */
export type DeprecatedName = keyof typeof DEPRECATED_SETTINGS;

type Parsed<S extends Record<string, Setting<unknown>>> = {
  -readonly [K in keyof S]: ReturnType<S[K]["parse"]>;
};
/** Every current setting's value. */
export type Settings = Parsed<typeof SETTINGS>;
/** Every deprecated setting's value, undefined where it is unset (so the new name decides). */
export type DeprecatedValues = {
  -readonly [K in DeprecatedName]: ReturnType<(typeof DEPRECATED_SETTINGS)[K]["parse"]> | undefined;
};

/** A variable's text, or undefined when it is unset, empty or not text. */
function rawOf(env: Readonly<Record<string, unknown>>, name: string): string | undefined {
  const value = env[name];
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
}

/**
 * Every current setting of `env`, parsed.
 * @throws {Error} naming the first invalid variable.
 */
export function parseSettings(env: Readonly<Record<string, unknown>>): Settings {
  const out: Record<string, unknown> = {};
  for (const [name, setting] of Object.entries(SETTINGS) as [string, Setting<unknown>][]) {
    out[name] = setting.parse(rawOf(env, name), name);
  }
  return out as Settings;
}

/**
 * Every deprecated setting that `env` sets, parsed (the others undefined).
 * @throws {Error} naming the first invalid variable.
 */
export function parseDeprecated(env: Readonly<Record<string, unknown>>): DeprecatedValues {
  const out: Record<string, unknown> = {};
  for (const [name, setting] of Object.entries(DEPRECATED_SETTINGS) as [string, Setting<unknown>][]) {
    const raw = rawOf(env, name);
    out[name] = raw === undefined ? undefined : setting.parse(raw, name);
  }
  return out as DeprecatedValues;
}
