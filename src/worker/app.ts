/**
 * The edge Worker (Hono): authentication, session routing and the HTTP surface. Owns the public
 * routes; every session-specific request is handed to that session's Durable Object.
 * - every route: CORS, and `OPTIONS` preflights answered without authentication (cors.ts);
 * - `GET /healthz` → `{"status":"ok"}` (no auth);
 * - `POST /v1/client_secrets` (tenant key only) and, in development, `POST /demo/client_secret`
 *   (no auth, `DEMO_CLIENT_SECRET_TENANT`): client secrets (client-secrets.ts);
 * - `GET /demo/` → the web agent page, only where the demo is enabled (demo-page.ts);
 * - `GET /v1/models` → the configured model list (auth; a client secret sees its own models);
 * - `GET /v1/usage` → the tenant's own usage by day and model (a tenant key only: a client secret
 *   gets 403, it reaches only its session); `/admin/v1/*` → the admin API
 *   behind `ADMIN_API_KEY` (src/tenancy/admin-api.ts);
 * - `GET /v1/responses` + `Upgrade: websocket` → 401 before any upgrade if the key is bad, 426
 *   without the upgrade header (Codex then falls back to HTTP), else the session's Durable Object
 *   accepts the socket. Sessions are namespaced by tenant, so tenants never share one;
 * - the HTTP Responses API (`POST /v1/responses`, `POST /v1/responses/compact`,
 *   `POST /v1/responses/input_tokens`, `GET|DELETE /v1/responses/{id}`, `…/input_items`,
 *   `…/cancel`), routed by responses-routes.ts;
 * - the Conversations API (`POST /v1/conversations`, `GET|POST|DELETE /v1/conversations/{id}`,
 *   `POST|GET …/items`, `GET|DELETE …/items/{item_id}`), routed by conversations-routes.ts.
 * This is the only route table: the session Durable Object has no router of its own.
 * Authentication is middleware (auth.ts) that throws like every route; errors are OpenAI's JSON
 * envelope (src/protocol/error-rendering.ts), rendered once, by `onError`.
 * Source: https://platform.openai.com/docs/api-reference/responses
 */
import { type Context, Hono } from "hono";
import { clientSecretNotTenantWide } from "../auth/errors.ts";
import { parseConfig, redactorOf } from "../config/config.ts";
import { asApiError, errorResponse } from "../protocol/error-rendering.ts";
import { ApiError } from "../protocol/errors.ts";
import { adminApi, tenantUsage } from "../tenancy/admin-api.ts";
import type { AppEnv } from "./app-env.ts";
import { authentication } from "./auth.ts";
import { createClientSecret, createDemoClientSecret } from "./client-secrets.ts";
import {
  addConversationItems,
  createConversation,
  deleteConversation,
  deleteConversationItem,
  listConversationItems,
  retrieveConversation,
  retrieveConversationItem,
  updateConversation,
} from "./conversations-routes.ts";
import { corsMiddleware } from "./cors.ts";
import { demoPage } from "./demo-page.ts";
import {
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

  // Before authentication: preflights are answered here, for every path (src/worker/cors.ts).
  app.use("*", corsMiddleware());

  app.get("/healthz", (c) => c.json({ status: "ok" }));
  app.route("/admin/v1", adminApi()); // its own secret, ADMIN_API_KEY (src/tenancy/admin-api.ts)

  app.post("/demo/client_secret", (c) => createDemoClientSecret(c));
  app.get("/demo", (c) => demoPage(c));
  app.get("/demo/*", (c) => demoPage(c));

  // A client secret may not mint secrets nor read tenant-wide routes (it reaches only its session);
  // every other route takes one, within its bindings.
  app.post("/v1/client_secrets", authentication({ clientSecrets: false }), (c) => createClientSecret(c));
  const tenantWide = authentication({ clientSecrets: false, refused: clientSecretNotTenantWide });
  app.get("/v1/usage", tenantWide, (c) => tenantUsage(c.env, c.get("tenant"), c.req.query("since")));
  app.use("/v1/*", authentication({ clientSecrets: true }));

  app.get("/v1/models", (c) => {
    const bound = c.get("principal").secret?.models;
    return c.json({
      object: "list",
      data: parseConfig(c.env)
        .models.filter((id) => !bound || bound.includes(id))
        .map((id) => ({ id, object: "model", created: 0, owned_by: "deltagate" })),
    });
  });

  app.get("/v1/responses", (c) => upgradeOr426(c));
  app.post("/v1/responses", (c) => createResponse(c));
  app.post("/v1/responses/compact", (c) => compactResponse(c));
  app.post("/v1/responses/input_tokens", (c) => countInputTokens(c));
  app.get("/v1/responses/:id", (c) => retrieveResponse(c));
  app.delete("/v1/responses/:id", (c) => deleteResponse(c));
  app.get("/v1/responses/:id/input_items", (c) => listInputItems(c));
  app.post("/v1/responses/:id/cancel", (c) => cancelResponse(c));
  app.post("/v1/conversations", (c) => createConversation(c));
  app.get("/v1/conversations/:id", (c) => retrieveConversation(c));
  app.post("/v1/conversations/:id", (c) => updateConversation(c));
  app.delete("/v1/conversations/:id", (c) => deleteConversation(c));
  app.post("/v1/conversations/:id/items", (c) => addConversationItems(c));
  app.get("/v1/conversations/:id/items", (c) => listConversationItems(c));
  app.get("/v1/conversations/:id/items/:item_id", (c) => retrieveConversationItem(c));
  app.delete("/v1/conversations/:id/items/:item_id", (c) => deleteConversationItem(c));
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
