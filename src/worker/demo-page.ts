/**
 * The web agent page (public/demo/: HTML, CSS and browser modules, no build step), served from
 * Workers Static Assets through the `ASSETS` binding
 * (https://developers.cloudflare.com/workers/static-assets/binding/). Owns whether it exists:
 * only where the demo is enabled — `DEMO_CLIENT_SECRET_TENANT` set, the setting that also enables
 * the page's backend route, `POST /demo/client_secret` (client-secrets.ts) — and a 404 otherwise,
 * so a production deployment serves no page unless its operator turns the demo on.
 * Invariant: assets are reached only through this route. wrangler.toml runs the Worker first for
 * every path (`run_worker_first = true`), so the asset server never answers an API or socket
 * path, nor the page where the demo is off.
 */
import type { Context } from "hono";
import { parseConfig } from "../config/config.ts";
import { ApiError } from "../protocol/errors.ts";
import type { AppEnv } from "./app-env.ts";

/** `GET /demo`, `GET /demo/*`: the page's files, or 404 where the demo is off. */
export function demoPage(c: Context<AppEnv>): Promise<Response> {
  const assets = c.env.ASSETS;
  if (parseConfig(c.env).clientSecrets.demoTenant === null || !assets) {
    throw new ApiError(404, {
      type: "invalid_request_error",
      code: "not_found",
      message: `Unknown route: GET ${new URL(c.req.url).pathname} (the demo page is served only when DEMO_CLIENT_SECRET_TENANT is set).`,
      param: null,
    });
  }
  return assets.fetch(c.req.raw);
}
