/**
 * The admin API from workerd tests (src/tenancy/admin-api.ts): tenants and keys made through the
 * real Worker with the test project's `ADMIN_API_KEY` (vitest.config.ts).
 */
import { workerFetch } from "./ws-client.ts";

/** The admin key of the `workers` test project. */
export const ADMIN_KEY = "dg-test-admin";

/** Calls the admin API with the admin key (or `key`). */
export function admin(
  path: string,
  init: { method?: string; body?: unknown; key?: string } = {},
): Promise<Response> {
  return workerFetch(`/admin/v1${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: { authorization: `Bearer ${init.key ?? ADMIN_KEY}`, "content-type": "application/json" },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
}

/** Creates a tenant (unique id from `label`) with `limits`, and one key; returns both. */
export async function tenantWithKey(
  label: string,
  limits: Record<string, number | null> = {},
  settings: Record<string, unknown> = {},
): Promise<{ tenant: string; key: string; keyId: string }> {
  const tenant = `${label}-${crypto.randomUUID().slice(0, 8)}`;
  const created = await admin("/tenants", { body: { id: tenant, limits, settings } });
  if (created.status !== 201)
    throw new Error(`tenant not created: ${created.status} ${await created.text()}`);
  const minted = await admin(`/tenants/${tenant}/keys`, { body: { name: "test" } });
  const { key, key_id } = (await minted.json()) as { key: string; key_id: string };
  return { tenant, key, keyId: key_id };
}
