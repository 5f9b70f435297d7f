/**
 * The edge Worker (Hono): authentication, session routing and the HTTP surface. Owns the public
 * routes; every session-specific request is handed to that session's Durable Object.
 * - `GET /healthz` → `{"status":"ok"}` (no auth);
 * - `GET /v1/models` → the configured model list (auth);
 * - `GET /v1/responses` + `Upgrade: websocket` → 401 before any upgrade if the key is bad, 426
 *   without the upgrade header (Codex then falls back to HTTP), else the session's Durable Object
 *   accepts the socket. Sessions are namespaced by tenant, so tenants never share one;
 * - the HTTP Responses API (`POST /v1/responses`, `GET|DELETE /v1/responses/{id}`,
 *   `…/input_items`, `…/cancel`), routed by responses-routes.ts.
 * Errors are OpenAI's JSON envelope (brief §5 "Errors").
 */
import { type Context, Hono } from "hono";
import { parseConfig } from "../config/config.ts";
import type { Env } from "../config/env.ts";
import { ApiError, internalError, invalidApiKey } from "../protocol/errors.ts";
import { authenticate } from "./auth.ts";
import { byResponseId, createResponse, forward, sessionObjectName } from "./responses-routes.ts";
import { sessionIdOf } from "./session-id.ts";

type AppEnv = { Bindings: Env; Variables: { tenant: string } };

/** The OpenAI error envelope as a JSON response. */
export function errorJson(error: ApiError): Response {
  return Response.json({ error: error.toBody() }, { status: error.status });
}

/** Builds the Hono app. */
export function createApp(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.onError((error) => {
    if (error instanceof ApiError) return errorJson(error);
    console.error("unhandled error", error);
    return errorJson(internalError());
  });
  app.notFound((c) =>
    errorJson(
      new ApiError(404, {
        type: "invalid_request_error",
        code: "not_found",
        message: `Unknown route: ${c.req.method} ${new URL(c.req.url).pathname}`,
        param: null,
      }),
    ),
  );

  app.get("/healthz", (c) => c.json({ status: "ok" }));

  app.use("/v1/*", async (c, next) => {
    const tenant = authenticate(c.req.raw.headers, parseConfig(c.env));
    if (!tenant) return errorJson(invalidApiKey());
    c.set("tenant", tenant);
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

  app.get("/v1/responses", (c) => upgrade(c));
  app.post("/v1/responses", (c) => createResponse(c));
  app.get("/v1/responses/:id", (c) => byResponseId(c));
  app.delete("/v1/responses/:id", (c) => byResponseId(c));
  app.get("/v1/responses/:id/input_items", (c) => byResponseId(c));
  app.post("/v1/responses/:id/cancel", (c) => byResponseId(c));
  return app;
}

async function upgrade(c: Context<AppEnv>): Promise<Response> {
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
    return errorJson(
      new ApiError(426, {
        type: "invalid_request_error",
        code: "upgrade_required",
        message: "GET /v1/responses needs `Upgrade: websocket`. Use POST /v1/responses for HTTP.",
        param: null,
      }),
    );
  }
  const tenant = c.get("tenant");
  const sessionId = sessionIdOf(c.req.raw);
  const stub = c.env.SESSIONS.getByName(sessionObjectName(tenant, sessionId));
  return forward(stub, c.req.raw, tenant, sessionId);
}
