/**
 * Typed configuration parsed once from `Env`. Owns the defaults; callers never read raw env
 * strings. Invariant: a `Config` never contains an unparsed or out-of-range value.
 */
import { z } from "zod";
import { isClientSecret, MIN_SIGNING_KEY_CHARS } from "../auth/client-secret.ts";
import { parseSafetySettings, type SafetySettings } from "../safety/config.ts";
import { SecretRedactor } from "../secrets/redactor.ts";
import { DEFAULT_KEEP_WARM_MS, DEFAULT_UPSTREAM_IDLE_MS } from "../upstream/responses-ws/adapter.ts";
import {
  parseRoutes,
  ROUTE_DEFAULTS,
  type RouteDefaults,
  UPSTREAM_APIS,
  type UpstreamApi,
  type UpstreamRoute,
} from "../upstream/routes.ts";
import type { Env } from "./env.ts";

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
   * The control plane's secret (`CONTROL_SECRET`, ≥ 16 characters): signs minted tenant keys and
   * seals tenants' upstream keys (src/tenancy/control-crypto.ts); null when unset.
   */
  controlSecret: string | null;
  /** The admin API's bearer token (`ADMIN_API_KEY`); null when unset (the admin API is off). */
  adminApiKey: string | null;
  /** One JSON log line per turn with its per-stage timing (`TURN_LOG`, default on; `0` turns it off). */
  turnLog: boolean;
  /** Keys of Deltagate's own compaction items, current first (`COMPACTION_KEY`; empty when unset). */
  compactionKeys: readonly string[];
  /** Client secrets and where credentials may travel (docs/browsers-and-phones.md). */
  clientSecrets: {
    /** HMAC key of client secrets (`CLIENT_SECRET_SIGNING_KEY`); null: client secrets are off. */
    signingKey: string | null;
    /** Accept a tenant key in the WebSocket subprotocol or the URL (`ALLOW_INSECURE_API_KEY`). */
    allowInsecureApiKey: boolean;
    /** The tenant `POST /demo/client_secret` mints for (`DEMO_CLIENT_SECRET_TENANT`); null: no such route. */
    demoTenant: string | null;
  };
  /** Origins allowed cross-origin (`CORS_ALLOWED_ORIGINS`): `*` or exact origins. */
  corsOrigins: "*" | ReadonlySet<string>;
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

const TRUE_WORDS = ["1", "true", "on", "yes"];

/**
 * `CLIENT_SECRET_SIGNING_KEY`: unset or empty → null.
 * @throws {Error} (never quoting the value) when it is shorter than 32 characters.
 */
function parseSigningKey(raw: string | undefined): string | null {
  const key = raw?.trim() ?? "";
  if (key === "") return null;
  if (key.length < MIN_SIGNING_KEY_CHARS) {
    throw new Error(`CLIENT_SECRET_SIGNING_KEY must be at least ${MIN_SIGNING_KEY_CHARS} characters`);
  }
  return key;
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

const keyPair = z
  .string()
  .regex(
    /^[^:\s]+:[A-Za-z0-9_.-]{1,64}$/,
    "each entry must be `key:tenant` (tenant: letters, digits, _ . -)",
  );

/**
 * Parses `DELTAGATE_API_KEYS` (`key:tenant,key2:tenant2`) into a map.
 * @throws {Error} naming the bad entry's index (never the key itself) when an entry is malformed.
 */
function parseApiKeys(raw: string | undefined): Map<string, string> {
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
 * Window and retry defaults of every route (`UPSTREAM_CONTEXT_WINDOW` tokens,
 * `UPSTREAM_MAX_RETRIES` 0–5, `UPSTREAM_RETRY_BASE_MS` ms); a route's own fields win.
 * @throws {Error} (zod) when a value is not a number in range.
 */
function routeDefaults(env: Env): RouteDefaults {
  return {
    contextWindow: z.coerce
      .number()
      .int()
      .positive()
      .parse(env.UPSTREAM_CONTEXT_WINDOW ?? ROUTE_DEFAULTS.contextWindow),
    maxRetries: z.coerce
      .number()
      .int()
      .min(0)
      .max(5)
      .parse(env.UPSTREAM_MAX_RETRIES ?? ROUTE_DEFAULTS.maxRetries),
    retryBaseMs: z.coerce
      .number()
      .int()
      .min(0)
      .max(10_000)
      .parse(env.UPSTREAM_RETRY_BASE_MS ?? ROUTE_DEFAULTS.retryBaseMs),
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

const cache = new WeakMap<Env, Config>();

/**
 * Returns the typed `Config` for an `Env`, parsing it on first use (memoized per env object).
 * @throws {Error} when a variable is malformed (bad URL, bad key list, non-positive lifetime).
 */
export function parseConfig(env: Env): Config {
  const cached = cache.get(env);
  if (cached) return cached;
  const baseUrl = z
    .url({ protocol: /^https?$/ })
    .parse(env.UPSTREAM_BASE_URL ?? "https://api.openai.com/v1")
    .replace(/\/+$/, "");
  const maxConnectionMs = z.coerce
    .number()
    .int()
    .positive()
    .parse(env.WS_MAX_CONNECTION_MS ?? DEFAULT_MAX_CONNECTION_MS);
  const upstream = { baseUrl, apiKey: env.UPSTREAM_API_KEY ? env.UPSTREAM_API_KEY : null };
  const api = z.enum(UPSTREAM_APIS).parse(env.UPSTREAM_API ?? defaultUpstreamApi(baseUrl));
  const secret = (name: string) => {
    const value = env[name];
    return typeof value === "string" ? value : undefined;
  };
  const routes = parseRoutes(env.UPSTREAMS, { ...upstream, api }, secret, routeDefaults(env));
  const apiKeys = parseApiKeys(env.DELTAGATE_API_KEYS);
  const demoTenant = env.DEMO_CLIENT_SECRET_TENANT?.trim() || null;
  if (demoTenant !== null && ![...apiKeys.values()].includes(demoTenant)) {
    throw new Error("DEMO_CLIENT_SECRET_TENANT names a tenant that has no key in DELTAGATE_API_KEYS");
  }
  const config: Config = {
    apiKeys,
    upstream,
    routes,
    upstreamIdleMs: z.coerce
      .number()
      .int()
      .positive()
      .parse(env.UPSTREAM_IDLE_MS ?? DEFAULT_UPSTREAM_IDLE_MS),
    upstreamKeepWarmMs: z.coerce
      .number()
      .int()
      .positive()
      .parse(env.UPSTREAM_KEEP_WARM_MS ?? DEFAULT_KEEP_WARM_MS),
    models: (env.MODELS ?? "")
      .split(",")
      .map((m) => m.trim())
      .filter((m) => m.length > 0),
    maxConnectionMs,
    retentionMs:
      z.coerce
        .number()
        .positive()
        .parse(env.RESPONSE_RETENTION_DAYS ?? 30) *
      24 *
      60 *
      60 *
      1000,
    abandonGraceMs: z.coerce
      .number()
      .int()
      .positive()
      .parse(env.ABANDONED_RESPONSE_GRACE_MS ?? 600_000),
    safety: parseSafetySettings(env, routes, upstream, env.AI !== undefined),
    redactor: SecretRedactor.fromEnv(
      env,
      routes.map((route) => route.apiKey),
    ),
    keepaliveMs: z.coerce
      .number()
      .int()
      .min(0)
      .max(3_600_000)
      .parse(env.KEEPALIVE_MS ?? DEFAULT_KEEPALIVE_MS),
    storeFalseGraceMs: z.coerce
      .number()
      .int()
      .min(0)
      .parse(env.STORE_FALSE_GRACE_MS ?? DEFAULT_STORE_FALSE_GRACE_MS),
    storeFalseGraceMaxMs: z.coerce
      .number()
      .int()
      .min(0)
      .parse(env.STORE_FALSE_GRACE_MAX_MS ?? DEFAULT_STORE_FALSE_GRACE_MAX_MS),
    controlSecret: env.CONTROL_SECRET
      ? z.string().min(16, "CONTROL_SECRET must be at least 16 characters").parse(env.CONTROL_SECRET)
      : null,
    adminApiKey: env.ADMIN_API_KEY ? env.ADMIN_API_KEY : null,
    turnLog: !["0", "false", "off", "no"].includes((env.TURN_LOG ?? "1").trim().toLowerCase()),
    compactionKeys: (env.COMPACTION_KEY ?? "")
      .split(",")
      .map((key) => key.trim())
      .filter((key) => key.length > 0),
    clientSecrets: {
      signingKey: parseSigningKey(env.CLIENT_SECRET_SIGNING_KEY),
      allowInsecureApiKey: TRUE_WORDS.includes((env.ALLOW_INSECURE_API_KEY ?? "").trim().toLowerCase()),
      demoTenant,
    },
    corsOrigins: parseCorsOrigins(env.CORS_ALLOWED_ORIGINS),
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
