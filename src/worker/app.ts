/**
 * The edge Worker (Hono): authentication, session routing and the HTTP surface. Owns the public
 * routes; every session-specific request is handed to that session's Durable Object.
 * - `GET /healthz` → `{"status":"ok"}` (no auth);
 * - `GET /v1/models` → the configured model list (auth);
 * - `GET /v1/usage` → the tenant's own usage by day and model; `/admin/v1/*` → the admin API
 *   behind `ADMIN_API_KEY` (src/tenancy/admin-api.ts);
 * - `GET /v1/responses` + `Upgrade: websocket` → 401 before any upgrade if the key is bad, 426
 *   without the upgrade header (Codex then falls back to HTTP), else the session's Durable Object
 *   accepts the socket. Sessions are namespaced by tenant, so tenants never share one;
 * - the HTTP Responses API (`POST /v1/responses`, `POST /v1/responses/compact`,
 *   `POST /v1/responses/input_tokens`, `GET|DELETE /v1/responses/{id}`, `…/input_items`,
 *   `…/cancel`), routed by responses-routes.ts.
 * This is the only route table: the session Durable Object has no router of its own.
 * Errors are OpenAI's JSON envelope (src/protocol/error-rendering.ts).
 * Source: https://platform.openai.com/docs/api-reference/responses
 */
import { type Context, Hono } from "hono";
import { parseConfig, redactorOf } from "../config/config.ts";
import { asApiError, errorResponse } from "../protocol/error-rendering.ts";
import { ApiError, invalidApiKey } from "../protocol/errors.ts";
import { adminApi, tenantUsage } from "../tenancy/admin-api.ts";
import { authenticate } from "./auth.ts";
import {
  type AppEnv,
  cancelResponse,
  compactResponse,
  countInputTokens,
  createResponse,
  deleteResponse,
  listInputItems,
  retrieveResponse,
  upgrade,
} from "./responses-routes.ts";

/** Builds the Hono app. */
export function createApp(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.onError((error, c) => {
    const redactor = redactorOf(c.env);
    return errorResponse(asApiError(error, "unhandled error", redactor), redactor);
  });
  app.notFound((c) =>
    errorResponse(
      new ApiError(404, {
        type: "invalid_request_error",
        code: "not_found",
        message: `Unknown route: ${c.req.method} ${new URL(c.req.url).pathname}`,
        param: null,
      }),
      redactorOf(c.env),
    ),
  );

  app.get("/healthz", (c) => c.json({ status: "ok" }));
  app.route("/admin/v1", adminApi()); // its own secret, ADMIN_API_KEY (src/tenancy/admin-api.ts)

  app.use("/v1/*", async (c, next) => {
    const config = parseConfig(c.env);
    const tenant = await authenticate(c.req.raw.headers, c.env, config, (p) => c.executionCtx.waitUntil(p));
    if (!tenant) return errorResponse(invalidApiKey(), config.redactor);
    c.set("tenant", tenant.id);
    c.set("principal", tenant);
    await next();
  });

  app.get("/v1/models", (c) =>
    c.json({
      object: "list",
      data: parseConfig(c.env).models.map((id) => ({
        id,
        object: "model",
        created: 0,
        owned_by: "deltagate",
      })),
    }),
  );

  app.get("/v1/usage", (c) => tenantUsage(c.env, c.get("tenant"), c.req.query("since")));
  app.get("/v1/responses", (c) => upgradeOr426(c));
  app.post("/v1/responses", (c) => createResponse(c));
  app.post("/v1/responses/compact", (c) => compactResponse(c));
  app.post("/v1/responses/input_tokens", (c) => countInputTokens(c));
  app.get("/v1/responses/:id", (c) => retrieveResponse(c));
  app.delete("/v1/responses/:id", (c) => deleteResponse(c));
  app.get("/v1/responses/:id/input_items", (c) => listInputItems(c));
  app.post("/v1/responses/:id/cancel", (c) => cancelResponse(c));
  return app;
}

function upgradeOr426(c: Context<AppEnv>): Promise<Response> | Response {
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
    return errorResponse(
      new ApiError(426, {
        type: "invalid_request_error",
        code: "upgrade_required",
        message: "GET /v1/responses needs `Upgrade: websocket`. Use POST /v1/responses for HTTP.",
        param: null,
      }),
      redactorOf(c.env),
    );
  }
  return upgrade(c);
}
