/**
 * The tenant registry: one Durable Object (`TENANT_REGISTRY.getByName("registry")`) listing the
 * tenants that exist, for the admin API's `GET /admin/v1/tenants` only. It is never on a request's
 * path (the Worker finds a tenant from its key, the sessions from their owner), so being one object
 * does not make it a bottleneck.
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../config/env.ts";

/** The list of tenant ids. */
export class TenantRegistryDurableObject extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS tenants (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL)",
    );
  }

  /** Records a tenant (idempotent). */
  add(id: string, createdAt: number): void {
    this.ctx.storage.sql.exec("INSERT OR IGNORE INTO tenants (id, created_at) VALUES (?, ?)", id, createdAt);
  }

  /** Every tenant id, oldest first. */
  list(): string[] {
    return this.ctx.storage.sql
      .exec<{ id: string }>("SELECT id FROM tenants ORDER BY created_at, id")
      .toArray()
      .map((row) => row.id);
  }
}
