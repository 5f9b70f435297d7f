/**
 * Session-level facts kept in the `meta` table (created by migrations.ts): the tenant that owns
 * this session Durable Object. Invariant: once set, the owning tenant never changes, so a
 * response id routed here by another tenant's request is simply not found.
 */

/**
 * Records `tenant` as the owner on first use.
 * @returns true when `tenant` owns this session (now or already), false for any other tenant.
 */
export function claimTenant(sql: SqlStorage, tenant: string): boolean {
  sql.exec("INSERT INTO meta (key, value) VALUES ('tenant', ?) ON CONFLICT(key) DO NOTHING", tenant);
  const row = sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'tenant'").one();
  return row.value === tenant;
}

/** The owning tenant, or null before the first request. */
export function ownerTenant(sql: SqlStorage): string | null {
  return (
    sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'tenant'").toArray()[0]?.value ?? null
  );
}
