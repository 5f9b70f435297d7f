/**
 * Cross-origin access to the HTTP API (https://fetch.spec.whatwg.org/#http-cors-protocol): a web
 * page on another origin may call every route, with `Authorization: Bearer <client secret>`.
 * Owns the CORS answer of every route and the origin rule.
 * - Preflights (`OPTIONS`) are answered here, for every path, before authentication (a browser
 *   never sends credentials on a preflight, so authenticating it could only fail).
 * - Any origin by default (`Access-Control-Allow-Origin: *`): the API takes bearer credentials and
 *   no cookies, as OpenAI's own API does, so a page can only use a credential it already holds.
 *   `CORS_ALLOWED_ORIGINS` narrows that to a list; a request from another origin (not the Worker's
 *   own) is then refused with 403 `origin_not_allowed`, a WebSocket upgrade included (browsers send
 *   `Origin` on sockets too, and sockets have no CORS).
 * - Requested headers are allowed as asked (the SDKs' `x-stainless-*`, `session-id`,
 *   `x-deltagate-timing`); `Server-Timing` is exposed so a page can read per-stage timing.
 * Invariant: a WebSocket upgrade response is never rebuilt here (its `webSocket` must pass through
 *   untouched), so upgrades get no CORS headers, which they do not need.
 */
import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { originNotAllowed } from "../auth/errors.ts";
import { parseConfig } from "../config/config.ts";
import type { AppEnv } from "./app-env.ts";

/** How long a browser may cache a preflight, in seconds (Chromium caps it at 7,200). */
const PREFLIGHT_MAX_AGE_S = 7200;

/** True when `origin` may call the API: every origin with `*`, else the list or the Worker's own. */
export function originAllowed(
  origins: "*" | ReadonlySet<string>,
  origin: string,
  requestUrl: string,
): boolean {
  return origins === "*" || origins.has(origin) || new URL(requestUrl).origin === origin;
}

/** The CORS middleware of every route (registered before authentication). */
export function corsMiddleware(): MiddlewareHandler<AppEnv> {
  const answer = cors({
    origin: (origin, c) => {
      const { corsOrigins } = parseConfig(c.env);
      if (corsOrigins === "*") return "*";
      return origin && originAllowed(corsOrigins, origin, c.req.url) ? origin : null;
    },
    allowMethods: ["GET", "POST", "DELETE", "OPTIONS"],
    exposeHeaders: ["server-timing"],
    maxAge: PREFLIGHT_MAX_AGE_S,
  });
  return async (c, next) => {
    const origin = c.req.header("origin");
    // No `Origin`: not a browser's cross-origin request (curl, SDKs, native apps); nothing to add.
    if (!origin) return next();
    const { corsOrigins } = parseConfig(c.env);
    if (c.req.method !== "OPTIONS" && !originAllowed(corsOrigins, origin, c.req.url))
      throw originNotAllowed();
    if (c.req.header("upgrade")?.toLowerCase() === "websocket") return next();
    return answer(c, next);
  };
}
