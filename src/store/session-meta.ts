/**
 * Session-level facts kept in the `meta` table (created by migrations.ts): the tenant that owns
 * this session Durable Object. Invariant: once set, the owning tenant never changes, so a
 * response id routed here by another tenant's request is simply not found.
 */
import { type ApiError, invalidRequest, previousResponseNotFound } from "../protocol/errors.ts";

/**
 * Records `tenant` as the owner on first use.
 * Reads before it writes: it runs on every HTTP `POST /v1/responses`, and any write statement
 * (even an `INSERT … DO NOTHING` that changes nothing) opens an implicit transaction whose commit
 * the output gate waits for before the turn's upstream fetch may leave. SQL calls are synchronous,
 * so nothing can claim the session between the read and the insert.
 * @returns true when `tenant` owns this session (now or already), false for any other tenant.
 */
export function claimTenant(sql: SqlStorage, tenant: string): boolean {
  const owner = ownerTenant(sql);
  if (owner !== null) return owner === tenant;
  sql.exec("INSERT INTO meta (key, value) VALUES ('tenant', ?)", tenant);
  return true;
}

/** The owning tenant, or null before the first request. */
export function ownerTenant(sql: SqlStorage): string | null {
  return (
    sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'tenant'").toArray()[0]?.value ?? null
  );
}

/**
 * `ownerTenant` read from SQLite until it is known, then from memory: the owner never changes once
 * set (this module's invariant), and the tenant is asked for on every turn (its limits, its safety
 * policy), where a statement per ask showed in the runtime's profile (issue #27).
 */
export function ownerTenantReader(sql: SqlStorage): () => string | null {
  let owner: string | null = null;
  return () => {
    owner ??= ownerTenant(sql);
    return owner;
  };
}

/**
 * The one tenant check of a session: it belongs to the tenant that first used it, forever. `claim`
 * (a turn, a socket) takes an unowned session; `read` (a response by id, an export) needs the
 * session to be the tenant's already.
 */
export function admits(sql: SqlStorage, tenant: string, access: "claim" | "read"): boolean {
  return access === "claim" ? claimTenant(sql, tenant) : ownerTenant(sql) === tenant;
}

/**
 * The error for a turn-like request that reached a session of another tenant: routed here by that
 * tenant's `previous_response_id`, it is not found, like every foreign id.
 */
export function foreignTenantError(parent: string | null | undefined): ApiError {
  return parent
    ? previousResponseNotFound(parent)
    : invalidRequest("This session belongs to another tenant.");
}
