/**
 * The control plane's Durable Object namespace bindings, typed here where their classes live (as
 * `SessionEnv` types `SESSIONS` in src/session/session-do.ts), so src/config/ imports nothing
 * above it. Both are optional: a deployment without them runs `DELTAGATE_API_KEYS` only.
 */
import type { Env } from "../config/env.ts";
import type { TenantRegistryDurableObject } from "./registry-do.ts";
import type { TenantDurableObject } from "./tenant-do.ts";

/** `Env` with the control plane's namespaces. */
export interface TenancyEnv extends Env {
  /** Durable Object namespace binding: one instance per tenant, the control plane (src/tenancy/). */
  TENANTS?: DurableObjectNamespace<TenantDurableObject>;
  /** Durable Object namespace binding: the list of tenants, for the admin API only. */
  TENANT_REGISTRY?: DurableObjectNamespace<TenantRegistryDurableObject>;
}
