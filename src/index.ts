/**
 * Deltagate's Worker entry point: the Hono app handles HTTP, and the session Durable Object class
 * is exported for its binding (`SESSIONS` in wrangler.toml), with the control plane's
 * (`TENANTS`, `TENANT_REGISTRY`: src/tenancy/).
 */
import { createApp } from "./worker/app.ts";

export { SessionDurableObject } from "./session/session-do.ts";
export { TenantRegistryDurableObject } from "./tenancy/registry-do.ts";
export { TenantDurableObject } from "./tenancy/tenant-do.ts";

export default createApp();
