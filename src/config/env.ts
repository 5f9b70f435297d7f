/**
 * The Worker's bindings and variables, as declared in wrangler.toml, .dev.vars and secrets.
 * Every value arrives as an untrusted string; `parseConfig` turns them into a typed `Config`. The
 * session Durable Object namespace binding (`SESSIONS`) is typed where its class lives
 * (src/session/session-do.ts `SessionEnv`), so this layer imports nothing above it.
 * Source: https://developers.cloudflare.com/workers/configuration/environment-variables/
 */
/** Raw environment of the Worker and of each session Durable Object. */
export interface Env {
  /** Secret bindings named by `UPSTREAMS[].api_key_var` are read by name. */
  [binding: string]: unknown;
  /** OpenAI-compatible base URL including `/v1`, e.g. `https://api.openai.com/v1`. */
  UPSTREAM_BASE_URL?: string;
  /** Secret bearer token sent upstream; never logged or echoed. */
  UPSTREAM_API_KEY?: string;
  /** Secret: comma-separated `key:tenant` pairs that Deltagate accepts. */
  DELTAGATE_API_KEYS?: string;
  /** Secret (≥ 16 characters): signs minted tenant keys and seals tenants' upstream keys (src/tenancy/control-crypto.ts). */
  CONTROL_SECRET?: string;
  /** Secret: the bearer token of the admin API (`/admin/v1/*`); no tenant key is ever accepted there. */
  ADMIN_API_KEY?: string;
  /** Comma-separated model ids listed by `GET /v1/models`. */
  MODELS?: string;
  /** JSON routing table (see src/upstream/routes.ts); overrides the three UPSTREAM_* defaults. */
  UPSTREAMS?: string;
  /**
   * Wire API of the default route: `responses-ws`, `responses-http` or `chat-completions` (default:
   * `responses-ws` for OpenAI's endpoint, `responses-http` for any other `UPSTREAM_BASE_URL`).
   */
  UPSTREAM_API?: string;
  /** Idle time in ms after which a warm upstream WebSocket is closed so the session can hibernate (no client open). */
  UPSTREAM_IDLE_MS?: string;
  /** Quiet time in ms after which a warm upstream WebSocket is closed even though a client is open (default 300,000). */
  UPSTREAM_KEEP_WARM_MS?: string;
  /** Context window in tokens of routes that set no `context_window` (default 128,000). */
  UPSTREAM_CONTEXT_WINDOW?: string;
  /** Retries (0–5) of an upstream 429/5xx before the first event, per route (default 2). */
  UPSTREAM_MAX_RETRIES?: string;
  /** First retry delay in ms, doubled per retry (default 250). */
  UPSTREAM_RETRY_BASE_MS?: string;
  /** Days a store:true response is kept (default 30). */
  RESPONSE_RETENTION_DAYS?: string;
  /** Ms a store:true response keeps generating with no client attached before it is cancelled (default 600,000). */
  ABANDONED_RESPONSE_GRACE_MS?: string;
  /** Ms a closed socket's store:false chain stays continuable by the tenant's sockets, unless the client asked (default 0 = none). */
  STORE_FALSE_GRACE_MS?: string;
  /** Longest store:false grace window a client may ask for on its upgrade, in ms (default 300,000; 0 = none). */
  STORE_FALSE_GRACE_MAX_MS?: string;
  /** `0` turns off the one-line-per-turn timing log (default on). */
  TURN_LOG?: string;
  /** WebSocket connection lifetime in ms (default 3,600,000 = 60 minutes, as OpenAI). */
  WS_MAX_CONNECTION_MS?: string;
  /** Ms of silence in a response's stream after which a `keepalive` event is sent (default 30,000; 0 = never). */
  KEEPALIVE_MS?: string;
  /** Safety policy of the deployment, JSON (src/safety/policy.ts; docs/safety.md). */
  SAFETY?: string;
  /** Safety mode: `off`, `blocking` or `parallel` (default); wins over `SAFETY.mode`. */
  SAFETY_MODE?: string;
  /** Safety policy overrides by tenant, JSON object `{"tenant": {…}}`. */
  SAFETY_TENANTS?: string;
  /** Local rules classifier configuration, JSON (src/safety/classifiers/rules.ts). */
  SAFETY_RULES?: string;
  /** Base URL (with `/v1`) of the moderation endpoint (default `UPSTREAM_BASE_URL`). */
  SAFETY_MODERATION_URL?: string;
  /** Secret bearer token of the moderation endpoint (default `UPSTREAM_API_KEY` for the default URL). */
  SAFETY_MODERATION_API_KEY?: string;
  /** Moderation model (default `omni-moderation-latest`). */
  SAFETY_MODERATION_MODEL?: string;
  /** Workers AI model of the llama-guard classifier (default `@cf/meta/llama-guard-3-8b`). */
  SAFETY_LLAMA_GUARD_MODEL?: string;
  /** Cross-session batching wait in ms (0 = off, default). */
  SAFETY_BATCH_WAIT_MS?: string;
  /** Cross-session batch size cap in texts (default 32). */
  SAFETY_BATCH_MAX_TEXTS?: string;
  /** Accounting log lines: `all`, `notable` (default) or `off`. */
  SAFETY_LOG?: string;
  /**
   * Secret: the key(s) Deltagate seals its own compaction items with (AES-GCM, src/compaction/),
   * comma-separated, current first; older ones still open items (rotation). Unset: Deltagate's own
   * compaction answers 503 `compaction_unavailable`.
   */
  COMPACTION_KEY?: string;
  /**
   * Secret: the HMAC key (≥ 32 characters) client secrets are signed with (src/auth/client-secret.ts).
   * Unset: `POST /v1/client_secrets` answers 501 and no client secret is accepted. Rotating it
   * revokes every client secret.
   */
  CLIENT_SECRET_SIGNING_KEY?: string;
  /** `true` accepts a tenant API key in the WebSocket subprotocol or `?api_key=` (default: refused). */
  ALLOW_INSECURE_API_KEY?: string;
  /** Origins allowed cross-origin: `*` (default) or a comma-separated list of `scheme://host[:port]`. */
  CORS_ALLOWED_ORIGINS?: string;
  /** Development only: the tenant `POST /demo/client_secret` mints for, without authentication (unset: no such route). */
  DEMO_CLIENT_SECRET_TENANT?: string;
  /** Workers Static Assets binding (`[assets]` in wrangler.toml): the demo page, public/demo/. */
  ASSETS?: Fetcher;
  /** Workers AI binding (`[ai] binding = "AI"` in wrangler.toml), for the llama-guard classifier. */
  AI?: { run(model: string, inputs: Record<string, unknown>): Promise<unknown> };
}
