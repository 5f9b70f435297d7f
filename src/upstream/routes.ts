/**
 * The upstream routing table: which upstream (and which wire API) serves which model. Owns the
 * `UPSTREAMS` configuration format and model matching.
 *
 * `UPSTREAMS` is a JSON array of routes in priority order, e.g.
 *   [{"model":"gpt-*","api":"responses-ws","base_url":"https://api.openai.com/v1","api_key_var":"OPENAI_API_KEY"},
 *    {"model":"llama-*","api":"chat-completions","base_url":"http://10.0.0.5:8000/v1"}]
 * `model` is an exact id or a glob with `*`; `api_key_var` names a secret binding (keys are never
 * written into the table itself); `idle_ms` (responses-ws only) overrides `UPSTREAM_IDLE_MS` for the
 * route's warm socket; `context_window` (tokens, default `UPSTREAM_CONTEXT_WINDOW` or 128,000) is
 * what `truncation` fits into; `max_retries` (default `UPSTREAM_MAX_RETRIES` or 2) bounds retries of
 * a 429/5xx before the first event; `safety` overrides the safety policy for the route's models
 * (src/safety/policy.ts; docs/safety.md); `compaction` and `input_tokens` (`upstream` | `deltagate`)
 * say whether `/v1/responses/compact`, `compaction_trigger`, `context_management` and
 * `/v1/responses/input_tokens` go to the upstream or are done by Deltagate (src/compaction/; default
 * `upstream` for a Responses route to OpenAI or Azure OpenAI, the providers known to have them, else
 * `deltagate`; a Chat Completions, Anthropic Messages or Gemini route is always `deltagate`). An
 * `anthropic-messages` route (docs/anthropic.md; base URL `https://api.anthropic.com/v1`) takes
 * `cache_breakpoints` (default true: automatic prompt-cache breakpoints) and `cache_min_tokens`
 * (default 1024: the model's minimum cacheable prompt). An `anthropic-messages` or `gemini` route
 * takes `hosted_tools` (`refuse` | `omit`, default `refuse`: a turn offering an OpenAI-hosted tool
 * such as `web_search` is refused with a 400, or sent without it). A `gemini` route (docs/gemini.md; base URL
 * `https://generativelanguage.googleapis.com/v1beta`) is always `deltagate` too. Routes with the same `model` pattern as the first matching one
 * form the model's fallback chain, tried in order (src/upstream/fallback.ts). Without `UPSTREAMS`, one catch-all route is built from `UPSTREAM_BASE_URL`,
 * `UPSTREAM_API_KEY` and `UPSTREAM_API` (default: `responses-ws` for OpenAI's endpoint, else `responses-http`).
 * Invariant: every parsed route has a valid http(s) base URL without a trailing slash.
 */
import { z } from "zod";

/** The wire APIs Deltagate can forward to. */
export const UPSTREAM_APIS = [
  "responses-http",
  "responses-ws",
  "chat-completions",
  "anthropic-messages",
  "gemini",
] as const;
/** One of `UPSTREAM_APIS`. */
export type UpstreamApi = (typeof UPSTREAM_APIS)[number];

/** Who serves compaction (or token counting) for a route: the upstream itself, or Deltagate. */
export type ExtensionMode = "upstream" | "deltagate";

/** A parsed route. */
export interface UpstreamRoute {
  /** Exact model id or glob (`*` matches any run of characters). */
  model: string;
  api: UpstreamApi;
  /** Base URL including `/v1`, no trailing slash. */
  baseUrl: string;
  /** Bearer token (resolved from `api_key_var`), or null. */
  apiKey: string | null;
  /** Optional model id to send upstream instead of the client's (e.g. a provider's own name). */
  upstreamModel: string | null;
  /** `responses-ws` only: idle ms before the warm socket closes (null = `UPSTREAM_IDLE_MS`). */
  idleMs: number | null;
  /**
   * `responses-http` only: the upstream stores responses (`store: true` upstream), so a chained turn
   * is sent as the delta plus the upstream's own `previous_response_id` (default false: full context).
   */
  upstreamStore: boolean;
  /** The model's context window, in tokens. */
  contextWindow: number;
  /** Retries of a failure before the first event on this route (then the next route). */
  maxRetries: number;
  /** First retry delay in ms (doubles per retry; see fallback.ts). */
  retryBaseMs: number;
  /** The route's safety policy override (`safety`, parsed by src/safety/config.ts), or null. */
  safety: Record<string, unknown> | null;
  /** Who compacts: `/v1/responses/compact`, `compaction_trigger`, `context_management`. */
  compaction: ExtensionMode;
  /** Who counts `/v1/responses/input_tokens`. */
  inputTokens: ExtensionMode;
  /** `anthropic-messages` only: place prompt-cache breakpoints (src/upstream/anthropic/). */
  cacheBreakpoints: boolean;
  /** `anthropic-messages` only: the model's minimum cacheable prompt, tokens. */
  cacheMinTokens: number;
  /**
   * `anthropic-messages` and `gemini` only: what a turn offering an OpenAI-hosted tool gets —
   * `refuse` (a 400 naming it) or `omit` (sent without it: src/upstream/tool-namespaces.ts).
   */
  hostedTools: "refuse" | "omit";
}

/** Settings every route gets unless it sets its own (from `UPSTREAM_CONTEXT_WINDOW` & co.). */
export interface RouteDefaults {
  /** Tokens. */
  contextWindow: number;
  maxRetries: number;
  /** Ms. */
  retryBaseMs: number;
}

/** Context window assumed when none is configured, in tokens (GPT-4o class models). */
export const DEFAULT_CONTEXT_WINDOW = 128_000;

/** Built-in route defaults. */
export const ROUTE_DEFAULTS: RouteDefaults = {
  contextWindow: DEFAULT_CONTEXT_WINDOW,
  maxRetries: 2,
  retryBaseMs: 250,
};

const routeSchema = z.strictObject({
  model: z.string().min(1),
  api: z.enum(UPSTREAM_APIS),
  base_url: z.url({ protocol: /^https?$/ }),
  api_key_var: z.string().min(1).optional(),
  upstream_model: z.string().min(1).optional(),
  idle_ms: z.number().int().positive().optional(),
  upstream_store: z.boolean().optional(),
  context_window: z.number().int().positive().optional(),
  max_retries: z.number().int().min(0).max(5).optional(),
  safety: z.record(z.string(), z.unknown()).optional(),
  compaction: z.enum(["upstream", "deltagate"]).optional(),
  input_tokens: z.enum(["upstream", "deltagate"]).optional(),
  cache_breakpoints: z.boolean().optional(),
  cache_min_tokens: z.number().int().positive().optional(),
  hosted_tools: z.enum(["refuse", "omit"]).optional(),
});

/** Default `cache_min_tokens`: the minimum cacheable prompt of Claude Sonnet and Opus models. */
const DEFAULT_CACHE_MIN_TOKENS = 1024;

/**
 * The default of `compaction` and `input_tokens`: `upstream` for a Responses route to OpenAI or
 * Azure OpenAI (the providers that serve `/responses/compact` and `/responses/input_tokens`), else
 * `deltagate`.
 */
export function defaultExtensionMode(api: UpstreamApi, baseUrl: string): ExtensionMode {
  if (api === "chat-completions" || api === "anthropic-messages" || api === "gemini") return "deltagate";
  const host = new URL(baseUrl).hostname;
  return host === "api.openai.com" || host.endsWith(".openai.azure.com") ? "upstream" : "deltagate";
}

/** Source of secret values by binding name (the Worker/Durable Object `env`). */
export type SecretLookup = (name: string) => string | undefined;

/**
 * Parses the routing table.
 * @param raw the `UPSTREAMS` JSON text, or undefined for the single default route.
 * @param fallback the default route's settings (from `UPSTREAM_BASE_URL` & co.).
 * @param defaults window and retry settings of routes that do not set their own.
 * @throws {Error} naming the bad route index and field when `raw` is not a valid table, or when
 *   an `api_key_var` names a binding that is not set.
 */
export function parseRoutes(
  raw: string | undefined,
  fallback: { baseUrl: string; apiKey: string | null; api: UpstreamApi },
  secret: SecretLookup,
  defaults: RouteDefaults = ROUTE_DEFAULTS,
): UpstreamRoute[] {
  if (raw === undefined || raw.trim() === "") {
    return [
      {
        model: "*",
        api: fallback.api,
        baseUrl: fallback.baseUrl,
        apiKey: fallback.apiKey,
        upstreamModel: null,
        idleMs: null,
        upstreamStore: false,
        safety: null,
        compaction: defaultExtensionMode(fallback.api, fallback.baseUrl),
        inputTokens: defaultExtensionMode(fallback.api, fallback.baseUrl),
        cacheBreakpoints: true,
        cacheMinTokens: DEFAULT_CACHE_MIN_TOKENS,
        hostedTools: "refuse",
        ...defaults,
      },
    ];
  }
  const parsed = z.array(routeSchema).min(1).safeParse(JSON.parse(raw));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `UPSTREAMS is invalid at ${issue?.path.join(".") ?? "?"}: ${issue?.message ?? "unknown"}`,
    );
  }
  return parsed.data.map((route, index) => {
    let apiKey: string | null = null;
    for (const field of ["compaction", "input_tokens"] as const) {
      if (route.api === "chat-completions" && route[field] === "upstream") {
        throw new Error(`UPSTREAMS[${index}].${field} cannot be "upstream" for a Chat Completions route`);
      }
      if (route.api === "anthropic-messages" && route[field] === "upstream") {
        throw new Error(`UPSTREAMS[${index}].${field} cannot be "upstream" for an Anthropic Messages route`);
      }
      if (route.api === "gemini" && route[field] === "upstream") {
        throw new Error(`UPSTREAMS[${index}].${field} cannot be "upstream" for a Gemini route`);
      }
    }
    for (const field of ["cache_breakpoints", "cache_min_tokens"] as const) {
      if (route[field] !== undefined && route.api !== "anthropic-messages") {
        throw new Error(`UPSTREAMS[${index}].${field} applies to "anthropic-messages" routes only`);
      }
    }
    if (route.hosted_tools !== undefined && route.api !== "anthropic-messages" && route.api !== "gemini") {
      throw new Error(
        `UPSTREAMS[${index}].hosted_tools applies to "anthropic-messages" and "gemini" routes only`,
      );
    }
    if (route.api_key_var) {
      const value = secret(route.api_key_var);
      if (value === undefined) throw new Error(`UPSTREAMS[${index}].api_key_var names an unset binding`);
      apiKey = value;
    }
    return {
      model: route.model,
      api: route.api,
      baseUrl: route.base_url.replace(/\/+$/, ""),
      apiKey,
      upstreamModel: route.upstream_model ?? null,
      idleMs: route.idle_ms ?? null,
      upstreamStore: route.upstream_store ?? false,
      contextWindow: route.context_window ?? defaults.contextWindow,
      maxRetries: route.max_retries ?? defaults.maxRetries,
      retryBaseMs: defaults.retryBaseMs,
      safety: route.safety ?? null,
      compaction: route.compaction ?? defaultExtensionMode(route.api, route.base_url),
      inputTokens: route.input_tokens ?? defaultExtensionMode(route.api, route.base_url),
      cacheBreakpoints: route.cache_breakpoints ?? true,
      cacheMinTokens: route.cache_min_tokens ?? DEFAULT_CACHE_MIN_TOKENS,
      hostedTools: route.hosted_tools ?? "refuse",
    };
  });
}

/** True when `model` matches a route's exact id or `*` glob. */
function routeMatches(pattern: string, model: string): boolean {
  if (!pattern.includes("*")) return pattern === model;
  const regex = new RegExp(`^${pattern.split("*").map(escapeRegex).join(".*")}$`);
  return regex.test(model);
}

function escapeRegex(text: string): string {
  return text.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
}

/** The routes serving `model`, in fallback order (empty when none matches). */
export function routesFor(routes: readonly UpstreamRoute[], model: string): UpstreamRoute[] {
  return routes.filter((route) => routeMatches(route.model, model));
}
