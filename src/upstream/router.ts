/**
 * Per-session upstream selection: maps a model to its route chain (routes.ts) and keeps one
 * adapter instance per route for the session's lifetime in memory, so stateful adapters (the
 * Responses WebSocket one) keep their warm connection across turns. Owns adapter construction and
 * which credential each call carries: the route's own key, unless the session's `RouteKeys`
 * (a tenant's own upstream key, src/tenancy/tenant-upstream-key.ts) says otherwise — for turns
 * (`upstreamFor`) and for the unary calls a session forwards (`unary`: `/responses/compact`,
 * `/responses/input_tokens`) alike: the one way out to a tenant's upstream.
 * Invariants: a model with no route is rejected before anything is sent anywhere; an adapter is
 * used only while its credential is the one `RouteKeys` gives for its route — when that changes,
 * the next lookup (or `rekey`) builds a new adapter and disposes the old one, whose warm socket
 * closes once its queued turns are done.
 */
import { ApiError } from "../protocol/errors.ts";
import type { JsonObject } from "../protocol/json.ts";
import { AnthropicMessagesUpstream } from "./anthropic/adapter.ts";
import { ChatCompletionsUpstream } from "./chat/adapter.ts";
import type { ClientPresence } from "./client-presence.ts";
import { decorateUpstream } from "./decorate.ts";
import { FallbackUpstream } from "./fallback.ts";
import { GeminiUpstream } from "./gemini/adapter.ts";
import { postJson } from "./http-client.ts";
import { ResponsesHttpUpstream } from "./responses-http.ts";
import { DEFAULT_UPSTREAM_IDLE_MS, ResponsesWsUpstream } from "./responses-ws/adapter.ts";
import { routesFor, type UpstreamRoute } from "./routes.ts";
import type { Upstream } from "./upstream.ts";

/** Adapter settings that come from the global configuration rather than from the route. */
export interface AdapterDefaults {
  /** Idle ms before a warm upstream WebSocket closes (`UPSTREAM_IDLE_MS`), unless the route sets `idle_ms`. */
  upstreamIdleMs: number;
  /** Quiet ms after which a warm upstream WebSocket closes even with a client open (`UPSTREAM_KEEP_WARM_MS`). */
  upstreamKeepWarmMs?: number;
  /** The session's client sockets (client-presence.ts), for the keep-warm policy. */
  presence?: ClientPresence;
}

/** Builds the adapter for one route (`defaults`: the parsed `Config`, or built-in defaults). */
export function createAdapter(
  route: UpstreamRoute,
  defaults: AdapterDefaults = { upstreamIdleMs: DEFAULT_UPSTREAM_IDLE_MS },
): Upstream {
  switch (route.api) {
    case "responses-http":
      return new ResponsesHttpUpstream({
        baseUrl: route.baseUrl,
        apiKey: route.apiKey,
        upstreamStore: route.upstreamStore,
      });
    case "chat-completions":
      return new ChatCompletionsUpstream({ baseUrl: route.baseUrl, apiKey: route.apiKey });
    case "anthropic-messages":
      return new AnthropicMessagesUpstream({
        baseUrl: route.baseUrl,
        apiKey: route.apiKey,
        cache: { breakpoints: route.cacheBreakpoints, minTokens: route.cacheMinTokens },
        omitHostedTools: route.hostedTools === "omit",
      });
    case "gemini":
      return new GeminiUpstream({
        baseUrl: route.baseUrl,
        apiKey: route.apiKey,
        omitHostedTools: route.hostedTools === "omit",
      });
    case "responses-ws":
      return new ResponsesWsUpstream({
        baseUrl: route.baseUrl,
        apiKey: route.apiKey,
        idleMs: route.idleMs ?? defaults.upstreamIdleMs,
        ...(defaults.upstreamKeepWarmMs === undefined ? {} : { keepWarmMs: defaults.upstreamKeepWarmMs }),
        ...(defaults.presence ? { presence: defaults.presence } : {}),
      });
  }
}

/** `adapter` bound to one route: the model id rewritten when the route says so. */
function routed(route: UpstreamRoute, adapter: Upstream): Upstream {
  const model = route.upstreamModel;
  return model ? decorateUpstream(adapter, { request: (request) => ({ ...request, model }) }) : adapter;
}

/** The bearer token a route's upstream calls carry now (default: the route's own `apiKey`). */
export type RouteKeys = (route: UpstreamRoute) => string | null;

/** The upstreams of one session Durable Object. */
export class UpstreamRouter {
  private readonly routes: readonly UpstreamRoute[];
  private readonly adapters = new Map<UpstreamRoute, { key: string | null; adapter: Upstream }>();
  private readonly factory: (route: UpstreamRoute) => Upstream;
  private readonly keys: RouteKeys;

  /**
   * @param routes the parsed routing table (config.ts).
   * @param factory adapter constructor (defaults to `createAdapter`; tests may pass their own); it
   *   gets the route with the key `keys` chose as its `apiKey`.
   * @param keys the credential of each route (default: its own key).
   */
  constructor(
    routes: readonly UpstreamRoute[],
    factory: (route: UpstreamRoute) => Upstream = createAdapter,
    keys: RouteKeys = (route) => route.apiKey,
  ) {
    this.routes = routes;
    this.factory = factory;
    this.keys = keys;
  }

  /** Disposes every adapter whose credential is no longer its route's (the key changed). */
  rekey(): void {
    for (const [route, entry] of this.adapters) {
      if (entry.key === this.keys(route)) continue;
      this.adapters.delete(route);
      entry.adapter.dispose?.();
    }
  }

  /**
   * The upstream for `model`: its route chain (the first matching route and the later routes with
   * the same `model` pattern), with retry and fallback (fallback.ts). A catch-all route after a
   * more specific one is not a fallback for it: it would receive a model id it may not serve.
   * @throws {ApiError} 400 `model_not_found` when no route matches.
   */
  upstreamFor(model: string): Upstream {
    const route = this.first(model);
    const chain = this.routes.filter((candidate) => candidate.model === route.model);
    return new FallbackUpstream(
      chain.map((link) => ({
        upstream: routed(link, this.adapterFor(link)),
        maxRetries: link.maxRetries,
        retryBaseMs: link.retryBaseMs,
        contextWindow: link.contextWindow,
      })),
    );
  }

  /**
   * The first route serving `model` (its `compaction` / `input_tokens` setting says who serves
   * those endpoints), or null.
   */
  routeFor(model: string): UpstreamRoute | null {
    return routesFor(this.routes, model)[0] ?? null;
  }

  /**
   * A unary JSON call to the first route of `model` (`path`: `/responses/compact`,
   * `/responses/input_tokens`): the body `build` makes for that route, its `model` rewritten as the
   * route says, sent with the credential `RouteKeys` gives the route (no retry, no fallback: the
   * answer is relayed as is).
   * @throws {ApiError} 400 `model_not_found` when no route matches; {UpstreamError} as `postJson`.
   */
  unary(
    model: string,
    path: string,
    build: (route: UpstreamRoute) => JsonObject,
    signal: AbortSignal,
  ): Promise<unknown> {
    const route = this.first(model);
    const body = { ...build(route), model: route.upstreamModel ?? model };
    return postJson({ baseUrl: route.baseUrl, apiKey: this.keys(route) }, path, JSON.stringify(body), signal);
  }

  /** The first route serving `model`. @throws {ApiError} 400 `model_not_found`. */
  private first(model: string): UpstreamRoute {
    const [route] = routesFor(this.routes, model);
    if (route) return route;
    throw new ApiError(400, {
      type: "invalid_request_error",
      code: "model_not_found",
      message: `The model '${model}' does not exist or is not routed by this Deltagate.`,
      param: "model",
    });
  }

  private adapterFor(route: UpstreamRoute): Upstream {
    const key = this.keys(route);
    const entry = this.adapters.get(route);
    if (entry?.key === key) return entry.adapter;
    entry?.adapter.dispose?.();
    const adapter = this.factory(key === route.apiKey ? route : { ...route, apiKey: key });
    this.adapters.set(route, { key, adapter });
    return adapter;
  }
}
