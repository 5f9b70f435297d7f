/**
 * The admin HTTP API (`/admin/v1/*`) and the tenant's own usage route (`GET /v1/usage`). Owns the
 * admin bearer check: only `ADMIN_API_KEY` opens it (compared in constant time); a tenant key never
 * does, and without the binding the whole API answers 404 as if it did not exist.
 * Routes (docs/tenancy.md "Admin API and CLI"):
 * - `GET|POST /admin/v1/tenants`, `GET|PATCH /admin/v1/tenants/{id}`;
 * - `GET|POST /admin/v1/tenants/{id}/keys`, `POST /admin/v1/tenants/{id}/keys/{key_id}/revoke`
 *   (a new key is in the `POST`'s answer, once; nothing can show it again);
 * - `GET|PUT|DELETE /admin/v1/tenants/{id}/webhook`: the tenant's webhook endpoint
 *   (docs/webhooks.md); its URL is checked as a delivery checks it
 *   (src/webhooks/webhook-target.ts), its signing secret made here unless given, and shown once, in
 *   the `PUT`'s answer;
 * - `GET /admin/v1/usage?tenant=&since=`.
 */
import { type Context, Hono } from "hono";
import { z } from "zod";
import { parseConfig } from "../config/config.ts";
import { safeEqual } from "../crypto/signing.ts";
import { zodToApiError } from "../protocol/client-events.ts";
import { errorResponse } from "../protocol/error-rendering.ts";
import { ApiError, invalidApiKey, invalidRequest } from "../protocol/errors.ts";
import { newSigningSecret, secretBytes } from "../webhooks/standard-webhooks.ts";
import { MAX_URL_CHARS, targetRefusal } from "../webhooks/webhook-target.ts";
import { TENANT_ID } from "./api-keys.ts";
import { presentedKey } from "./presented-key.ts";
import type { TenancyEnv } from "./tenancy-env.ts";
import { tenantLimitsSchema, tenantSettingsSchema } from "./tenant.ts";
import type { TenantDurableObject } from "./tenant-do.ts";
import type { UsageRow } from "./tenant-store.ts";
import { sinceDay, usageBuckets, usageTotal } from "./usage-report.ts";

type AdminEnv = { Bindings: TenancyEnv };

const createTenant = z.strictObject({
  id: z.string().regex(TENANT_ID, "letters, digits, '_', '.', '-' (1-64)"),
  name: z.string().min(1).max(200).optional(),
  limits: tenantLimitsSchema.optional(),
  settings: tenantSettingsSchema.optional(),
});
const updateTenant = z.strictObject({
  limits: tenantLimitsSchema.optional(),
  settings: tenantSettingsSchema.optional(),
  /** The tenant's own upstream key (sealed at rest); null removes it. */
  upstream_api_key: z.string().min(1).max(4096).nullable().optional(),
});
const createKey = z.strictObject({ name: z.string().min(1).max(200).optional() });
const setWebhook = z.strictObject({
  url: z.string().min(1).max(MAX_URL_CHARS),
  /** A `whsec_` secret to keep (e.g. moving an endpoint); absent: a new one is made. */
  secret: z.string().min(1).max(200).optional(),
});

function notFound(what: string): ApiError {
  return new ApiError(404, {
    type: "invalid_request_error",
    code: "not_found",
    message: `${what} not found.`,
    param: null,
  });
}

async function body<T extends z.ZodType>(c: Context<AdminEnv>, schema: T): Promise<z.infer<T>> {
  let raw: unknown = {};
  const text = await c.req.text();
  if (text.trim() !== "") {
    try {
      raw = JSON.parse(text);
    } catch {
      throw invalidRequest("The body is not valid JSON.", null, "invalid_json");
    }
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw zodToApiError(parsed.error);
  return parsed.data;
}

function tenants(env: TenancyEnv): DurableObjectNamespace<TenantDurableObject> {
  if (!env.TENANTS)
    throw new ApiError(503, {
      type: "server_error",
      code: "control_plane_unavailable",
      message: "The TENANTS binding is not configured.",
      param: null,
    });
  return env.TENANTS;
}

/** The tenant's stub when it exists, else a 404. */
async function existing(env: TenancyEnv, id: string) {
  if (!TENANT_ID.test(id)) throw notFound(`Tenant '${id}'`);
  const stub = tenants(env).getByName(id);
  const info = await stub.info();
  if (!info) throw notFound(`Tenant '${id}'`);
  return { stub, info };
}

/**
 * `existing`, after making a tenant of `DELTAGATE_API_KEYS` that no request made yet (its first
 * request would: tenant-do.ts `snapshot`), so its webhook can be set before any turn.
 */
async function existingOrKeyed(env: TenancyEnv, id: string) {
  if (TENANT_ID.test(id) && [...parseConfig(env).apiKeys.values()].includes(id)) {
    await tenants(env).getByName(id).ensure(id, id);
  }
  return existing(env, id);
}

/** Every tenant: the registry's and those of `DELTAGATE_API_KEYS`. */
async function tenantIds(env: TenancyEnv): Promise<string[]> {
  const listed = env.TENANT_REGISTRY ? await env.TENANT_REGISTRY.getByName("registry").list() : [];
  const fromEnv = [...new Set(parseConfig(env).apiKeys.values())];
  return [...new Set([...listed, ...fromEnv])];
}

/** The admin sub-app, mounted at `/admin/v1`. */
export function adminApi(): Hono<AdminEnv> {
  const admin = new Hono<AdminEnv>();
  admin.use("*", async (c, next) => {
    const { adminApiKey: secret, redactor } = parseConfig(c.env);
    if (secret === null) {
      return errorResponse(notFound(`Route ${c.req.method} ${new URL(c.req.url).pathname}`), redactor);
    }
    const key = presentedKey(c.req.raw.headers) ?? "";
    if (!safeEqual(key, secret)) {
      return errorResponse(invalidApiKey(), redactor);
    }
    await next();
  });

  admin.get("/tenants", async (c) => {
    const ids = await tenantIds(c.env);
    const data = await Promise.all(
      ids.map(async (id) => (await tenants(c.env).getByName(id).info()) ?? { id }),
    );
    return c.json({ object: "list", data });
  });
  admin.post("/tenants", async (c) => {
    const request = await body(c, createTenant);
    const stub = tenants(c.env).getByName(request.id);
    const { info, created } = await stub.ensure(request.id, request.name ?? request.id);
    if (!created) {
      throw new ApiError(409, {
        type: "invalid_request_error",
        code: "tenant_exists",
        message: `Tenant '${request.id}' exists already.`,
        param: "id",
      });
    }
    const changed =
      request.limits || request.settings
        ? await stub.update({
            ...(request.limits ? { limits: request.limits } : {}),
            ...(request.settings ? { settings: request.settings } : {}),
          })
        : info;
    return c.json(changed, 201);
  });
  admin.get("/tenants/:id", async (c) => c.json((await existing(c.env, c.req.param("id"))).info));
  admin.patch("/tenants/:id", async (c) => {
    const { stub } = await existing(c.env, c.req.param("id"));
    const change = await body(c, updateTenant);
    return c.json(
      await stub.update({
        ...(change.limits ? { limits: change.limits } : {}),
        ...(change.settings ? { settings: change.settings } : {}),
        ...(change.upstream_api_key !== undefined ? { upstreamApiKey: change.upstream_api_key } : {}),
      }),
    );
  });
  admin.get("/tenants/:id/keys", async (c) => {
    const { stub } = await existing(c.env, c.req.param("id"));
    return c.json({ object: "list", data: await stub.listKeys() });
  });
  admin.post("/tenants/:id/keys", async (c) => {
    const { stub } = await existing(c.env, c.req.param("id"));
    const { name } = await body(c, createKey);
    if (parseConfig(c.env).controlSecret === null) {
      throw new ApiError(503, {
        type: "server_error",
        code: "control_secret_missing",
        message: "DELTAGATE_SECRET is not set: keys cannot be minted.",
        param: null,
      });
    }
    const { key, record } = await stub.createKey(name ?? null);
    return c.json({ ...record, key }, 201);
  });
  admin.post("/tenants/:id/keys/:key_id/revoke", async (c) => {
    const { stub } = await existing(c.env, c.req.param("id"));
    const keyId = c.req.param("key_id");
    if (!(await stub.revokeKey(keyId))) throw notFound(`Key '${keyId}'`);
    return c.json({ key_id: keyId, revoked: true });
  });
  admin.put("/tenants/:id/webhook", async (c) => {
    const { stub } = await existingOrKeyed(c.env, c.req.param("id"));
    const { url, secret } = await body(c, setWebhook);
    const config = parseConfig(c.env);
    const refusal = targetRefusal(url, config.webhooks.privateTargets);
    if (refusal) throw invalidRequest(refusal, "url", "invalid_value");
    if (secret !== undefined && !secretBytes(secret)) {
      throw invalidRequest(
        "'secret' must be whsec_ followed by base64 of 24 to 64 bytes.",
        "secret",
        "invalid_value",
      );
    }
    if (config.controlSecret === null) {
      throw new ApiError(503, {
        type: "server_error",
        code: "control_secret_missing",
        message: "DELTAGATE_SECRET is not set: a webhook secret cannot be stored.",
        param: null,
      });
    }
    return c.json(await stub.setWebhook(url, secret ?? newSigningSecret()));
  });
  admin.get("/tenants/:id/webhook", async (c) => {
    const { stub } = await existing(c.env, c.req.param("id"));
    const info = await stub.webhookInfo();
    if (!info) throw notFound(`The webhook endpoint of tenant '${c.req.param("id")}'`);
    return c.json(info);
  });
  admin.delete("/tenants/:id/webhook", async (c) => {
    const { stub } = await existing(c.env, c.req.param("id"));
    if (!(await stub.removeWebhook()))
      throw notFound(`The webhook endpoint of tenant '${c.req.param("id")}'`);
    return c.json({ object: "webhook_endpoint", deleted: true });
  });
  admin.get("/usage", async (c) => {
    const since = sinceDay(c.req.query("since"), Date.now());
    const only = c.req.query("tenant");
    const ids = only ? [only] : await tenantIds(c.env);
    const data = [];
    const all: UsageRow[] = [];
    for (const id of ids) {
      if (!TENANT_ID.test(id)) throw notFound(`Tenant '${id}'`);
      const rows = await tenants(c.env).getByName(id).usage(since);
      all.push(...rows);
      for (const bucket of usageBuckets(rows)) data.push({ tenant: id, ...bucket });
    }
    return c.json({ object: "list", since, data, total: usageTotal(all) });
  });
  return admin;
}

/** `GET /v1/usage?since=YYYY-MM-DD`: the calling tenant's own ledger, by day and model. */
export async function tenantUsage(
  env: TenancyEnv,
  tenant: string,
  since: string | undefined,
): Promise<Response> {
  const from = sinceDay(since, Date.now());
  const rows = env.TENANTS ? await env.TENANTS.getByName(tenant).usage(from) : [];
  return Response.json({
    object: "list",
    tenant,
    since: from,
    data: usageBuckets(rows),
    total: usageTotal(rows),
  });
}
