/**
 * Typed configuration parsed once from `Env` by the configuration schema (schema.ts), which owns
 * every variable's type, default and range; this module combines them (routes, safety, the
 * redactor) and resolves the deprecated names: each is still read until the release its
 * declaration names, wins over its replacement as it did before (so an existing deployment gets
 * exactly the configuration it had), and is warned about once per isolate.
 * Invariant: a `Config` never contains an unparsed or out-of-range value; callers never read raw
 * env strings.
 */

import type { PriceTable } from "../context/turn-cost.ts";
import { parseSafetySettings, type SafetySettings } from "../safety/config.ts";
import type { PolicyOverride } from "../safety/policy.ts";
import { SecretRedactor } from "../secrets/redactor.ts";
import { parseRoutes, type UpstreamApi, type UpstreamRoute } from "../upstream/routes.ts";
import type { RetryPolicy } from "../webhooks/delivery.ts";
import type { PrivateTargets } from "../webhooks/webhook-target.ts";
import type { Env } from "./env.ts";
import { derivedSecret } from "./root-secret.ts";
import {
  DEPRECATED_SETTINGS,
  type DeprecatedName,
  type DeprecatedValues,
  parseDeprecated,
  parseSettings,
  type Settings,
} from "./schema.ts";

/** Parsed configuration shared by the Worker and the session Durable Object. */
export interface Config {
  /** API key → tenant id. Empty when no keys are configured (every request then gets 401). */
  apiKeys: ReadonlyMap<string, string>;
  upstream: {
    /** Base URL without a trailing slash, including `/v1`. */
    baseUrl: string;
    /** Bearer token for the upstream, or null to send none. */
    apiKey: string | null;
  };
  /** Routing table: which upstream serves which model, in fallback order. */
  routes: readonly UpstreamRoute[];
  /** Idle ms after which a warm upstream WebSocket is closed when no client is open (default 30,000). */
  upstreamIdleMs: number;
  /** Quiet ms after which a warm upstream WebSocket is closed even with a client open (default 300,000). */
  upstreamKeepWarmMs: number;
  /** Prices per model (`PRICES`, src/context/turn-cost.ts): each metered call's cost; empty: none. */
  prices: PriceTable;
  /** Model ids advertised by `GET /v1/models`. */
  models: readonly string[];
  /** WebSocket connection lifetime in ms. */
  maxConnectionMs: number;
  /** How long store:true responses are kept, in ms (default 30 days). */
  retentionMs: number;
  /** Grace period before an abandoned store:true response is cancelled, in ms (default 10 minutes). */
  abandonGraceMs: number;
  /** Safety checks: policy by deployment, route and tenant, classifiers (src/safety/config.ts). */
  safety: SafetySettings;
  /**
   * The secrets of this environment (every key-named binding, every tenant key, every route's
   * upstream key), redacted from every error and log line (src/secrets/redactor.ts).
   */
  redactor: SecretRedactor;
  /** Silence in ms after which a response in flight sends a `keepalive` event (0 = never). */
  keepaliveMs: number;
  /**
   * How long a closed socket's store:false state stays continuable by another socket of the same
   * tenant when the client did not ask for a window, in ms (default 0 = deleted on close, as
   * OpenAI).
   */
  storeFalseGraceMs: number;
  /**
   * The longest window a client may ask for on its upgrade (`x-deltagate-store-false-grace`,
   * src/http/client-options.ts), in ms (default 5 minutes; 0 = clients cannot ask).
   */
  storeFalseGraceMaxMs: number;
  /**
   * The control plane's secret: signs minted tenant keys and seals tenants' upstream keys
   * (src/tenancy/control-crypto.ts derives a key per purpose from it). `DELTAGATE_SECRET`, or the
   * deprecated `CONTROL_SECRET` (≥ 16 characters) when set; null when neither is.
   */
  controlSecret: string | null;
  /** The admin API's bearer token (`ADMIN_API_KEY`); null when unset (the admin API is off). */
  adminApiKey: string | null;
  /** One JSON log line per turn with its per-stage timing (`TURN_LOG`, default on; `0` turns it off). */
  turnLog: boolean;
  /**
   * Keys of Deltagate's own compaction items, current first (the first seals, every one opens):
   * the one derived from `DELTAGATE_SECRET` (root-secret.ts), then the deprecated `COMPACTION_KEY`'s;
   * empty when neither is set. A promise: the derivation is WebCrypto's.
   */
  compactionKeys: Promise<readonly string[]>;
  /** Client secrets and where credentials may travel (docs/browsers-and-phones.md). */
  clientSecrets: {
    /**
     * HMAC key of client secrets: the deprecated `CLIENT_SECRET_SIGNING_KEY` when set, else derived
     * from `DELTAGATE_SECRET` (root-secret.ts); null: client secrets are off. A promise: the
     * derivation is WebCrypto's.
     */
    signingKey: Promise<string> | null;
    /** Accept a tenant key in the WebSocket subprotocol or the URL (`ALLOW_INSECURE_API_KEY`). */
    allowInsecureApiKey: boolean;
    /** The tenant `POST /demo/client_secret` mints for (`DEMO_CLIENT_SECRET_TENANT`); null: no such route. */
    demoTenant: string | null;
  };
  /** Origins allowed cross-origin (`CORS_ALLOWED_ORIGINS`): `*` or exact origins. */
  corsOrigins: "*" | ReadonlySet<string>;
  /** Webhook delivery (docs/webhooks.md). */
  webhooks: {
    /** Private or loopback targets allowed (`WEBHOOK_ALLOW_PRIVATE_TARGETS`; default none). */
    privateTargets: PrivateTargets;
    /** The backoff and the attempts at most (`WEBHOOK_RETRY_BASE_MS`, `WEBHOOK_MAX_ATTEMPTS`). */
    retry: RetryPolicy;
  };
}

/**
 * The wire API of the default route when `UPSTREAM_API` is unset: Responses WebSocket mode for
 * OpenAI's own endpoint, which speaks it (delta-only turns over a warm socket,
 * https://developers.openai.com/api/docs/guides/websocket-mode), else Responses over HTTP/SSE,
 * which every OpenAI-compatible server speaks. `npm start` sets `responses-ws` for the embedded
 * simulator (scripts/local-stack.ts).
 */
export function defaultUpstreamApi(baseUrl: string): UpstreamApi {
  return new URL(baseUrl).hostname === "api.openai.com" ? "responses-ws" : "responses-http";
}

export {
  DEFAULT_KEEPALIVE_MS,
  DEFAULT_STORE_FALSE_GRACE_MAX_MS,
  DEFAULT_STORE_FALSE_GRACE_MS,
} from "./schema.ts";

const cache = new WeakMap<Env, Config>();
const warned = new Set<DeprecatedName>();

/** Logs, once per isolate, each deprecated name `env` sets and what replaces it. */
function warnDeprecated(deprecated: DeprecatedValues): void {
  for (const name of Object.keys(DEPRECATED_SETTINGS) as DeprecatedName[]) {
    if (deprecated[name] === undefined || warned.has(name)) continue;
    warned.add(name);
    const { replacedBy, until } = DEPRECATED_SETTINGS[name];
    console.warn(
      JSON.stringify({
        type: "deltagate.config",
        warning: `${name} is deprecated and read until ${until}; use ${replacedBy.replaceAll("`", "")}`,
      }),
    );
  }
}

/**
 * The deployment's safety policy: `SAFETY`, with the deprecated flat variables on top of it (they
 * won over its fields before, and still do).
 */
function deploymentPolicy(settings: Settings, deprecated: DeprecatedValues): PolicyOverride | undefined {
  const flat: PolicyOverride = {
    ...(deprecated.SAFETY_MODE ? { mode: deprecated.SAFETY_MODE } : {}),
    ...(deprecated.SAFETY_BATCH_WAIT_MS !== undefined
      ? { batch_wait_ms: deprecated.SAFETY_BATCH_WAIT_MS }
      : {}),
    ...(deprecated.SAFETY_BATCH_MAX_TEXTS !== undefined
      ? { batch_max_texts: deprecated.SAFETY_BATCH_MAX_TEXTS }
      : {}),
  };
  if (Object.keys(flat).length === 0) return settings.SAFETY;
  return { ...settings.SAFETY, ...flat };
}

/**
 * The secrets of each purpose. A deprecated secret that is set serves its purpose exactly as
 * before (values made with it keep verifying and opening); `DELTAGATE_SECRET` serves the others.
 */
function secrets(
  root: string | null,
  deprecated: DeprecatedValues,
): Pick<Config, "controlSecret" | "compactionKeys"> & { signingKey: Promise<string> | null } {
  const legacyCompaction = deprecated.COMPACTION_KEY ?? [];
  return {
    controlSecret: deprecated.CONTROL_SECRET ?? root,
    signingKey:
      deprecated.CLIENT_SECRET_SIGNING_KEY != null
        ? Promise.resolve(deprecated.CLIENT_SECRET_SIGNING_KEY)
        : root === null
          ? null
          : derivedSecret(root, "clientSecrets"),
    compactionKeys:
      root === null
        ? Promise.resolve(legacyCompaction)
        : derivedSecret(root, "compaction").then((key) => [key, ...legacyCompaction]),
  };
}

/**
 * Returns the typed `Config` for an `Env`, parsing it on first use (memoized per env object).
 * @throws {Error} naming the variable when one is malformed (bad URL, bad key list, out of range).
 */
export function parseConfig(env: Env): Config {
  const cached = cache.get(env);
  if (cached) return cached;
  const settings = parseSettings(env);
  const deprecated = parseDeprecated(env);
  warnDeprecated(deprecated);
  const baseUrl = settings.UPSTREAM_BASE_URL;
  const upstream = { baseUrl, apiKey: settings.UPSTREAM_API_KEY };
  const api = settings.UPSTREAM_API ?? defaultUpstreamApi(baseUrl);
  const secret = (name: string) => {
    const value = env[name];
    return typeof value === "string" ? value : undefined;
  };
  const routes = parseRoutes(settings.UPSTREAMS, { ...upstream, api }, secret, {
    contextWindow: settings.UPSTREAM_CONTEXT_WINDOW,
    maxRetries: settings.UPSTREAM_MAX_RETRIES,
    retryBaseMs: settings.UPSTREAM_RETRY_BASE_MS,
  });
  const apiKeys = settings.DELTAGATE_API_KEYS;
  const demoTenant = settings.DEMO_CLIENT_SECRET_TENANT?.trim() || null;
  if (demoTenant !== null && ![...apiKeys.values()].includes(demoTenant)) {
    throw new Error("DEMO_CLIENT_SECRET_TENANT names a tenant that has no key in DELTAGATE_API_KEYS");
  }
  const { signingKey, ...keys } = secrets(settings.DELTAGATE_SECRET, deprecated);
  const safety = parseSafetySettings(
    {
      policy: deploymentPolicy(settings, deprecated),
      tenants: settings.SAFETY_TENANTS,
      rules: settings.SAFETY_RULES,
      moderationUrl: settings.SAFETY_MODERATION_URL,
      moderationApiKey: settings.SAFETY_MODERATION_API_KEY,
      moderationModel: settings.SAFETY_MODERATION_MODEL,
      llamaGuardModel: settings.SAFETY_LLAMA_GUARD_MODEL,
      log: settings.SAFETY_LOG,
    },
    routes,
    upstream,
    env.AI !== undefined,
  );
  const config: Config = {
    apiKeys,
    upstream,
    routes,
    upstreamIdleMs: settings.UPSTREAM_IDLE_MS,
    upstreamKeepWarmMs: settings.UPSTREAM_KEEP_WARM_MS,
    models: settings.MODELS,
    prices: settings.PRICES,
    maxConnectionMs: settings.WS_MAX_CONNECTION_MS,
    retentionMs: settings.RESPONSE_RETENTION_DAYS * 24 * 60 * 60 * 1000,
    abandonGraceMs: settings.ABANDONED_RESPONSE_GRACE_MS,
    safety,
    redactor: SecretRedactor.fromEnv(
      env,
      routes.map((route) => route.apiKey),
    ),
    keepaliveMs: settings.KEEPALIVE_MS,
    storeFalseGraceMs: settings.STORE_FALSE_GRACE_MS,
    storeFalseGraceMaxMs: settings.STORE_FALSE_GRACE_MAX_MS,
    ...keys,
    adminApiKey: settings.ADMIN_API_KEY,
    turnLog: settings.TURN_LOG,
    clientSecrets: {
      signingKey,
      allowInsecureApiKey: settings.ALLOW_INSECURE_API_KEY,
      demoTenant,
    },
    corsOrigins: settings.CORS_ALLOWED_ORIGINS,
    webhooks: {
      privateTargets: settings.WEBHOOK_ALLOW_PRIVATE_TARGETS,
      retry: { baseMs: settings.WEBHOOK_RETRY_BASE_MS, maxAttempts: settings.WEBHOOK_MAX_ATTEMPTS },
    },
  };
  cache.set(env, config);
  return config;
}

/**
 * The redactor of an environment, also when its configuration does not parse (then from the
 * binding names alone), so an error about a bad configuration is still rendered without secrets.
 */
export function redactorOf(env: Env): SecretRedactor {
  try {
    return parseConfig(env).redactor;
  } catch {
    return SecretRedactor.fromEnv(env);
  }
}
