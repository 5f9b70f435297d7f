/**
 * Admission of a WebSocket before its upgrade (max_sockets, sessions_per_key): the one round trip
 * to the tenant's Durable Object a connection may cost, and only when the tenant has one of these
 * limits (counting open sockets needs the tenant-wide count; verifying the key does not). Owns the
 * lease that travels to the session Durable Object with the upgrade (`TENANCY_HEADER`) and is
 * released when the socket closes; a lease that is never released (a crash) expires with the
 * connection lifetime (`WS_MAX_CONNECTION_MS`, 60 minutes), as the socket itself would.
 */
import { randomHex } from "./api-keys.ts";
import { limitReached, type RateLimitError } from "./limit-errors.ts";
import type { Tenant } from "./tenant.ts";
import type { TenantDurableObject } from "./tenant-do.ts";

/** Header of the upgrade the Worker forwards: the tenant snapshot and the socket's lease, JSON. */
export const TENANCY_HEADER = "x-deltagate-tenancy";

/** Seconds a refused connection is told to wait: sockets free up when clients close them. */
export const SOCKET_RETRY_AFTER_S = 5;

/** What the session Durable Object learns of a socket's tenancy. */
export interface SocketTenancy {
  tenant: Tenant;
  /** The lease to release on close, or null when none was taken. */
  lease: string | null;
}

/**
 * Takes a socket lease for `tenant` on `session` when its limits need one.
 * @returns the socket's tenancy, or the 429 to answer instead of upgrading.
 */
export async function admitSocket(
  tenants: DurableObjectNamespace<TenantDurableObject> | undefined,
  tenant: Tenant,
  session: string,
  ttlMs: number,
): Promise<SocketTenancy | RateLimitError> {
  const { max_sockets, sessions_per_key } = tenant.limits;
  if (!tenants || (max_sockets === null && sessions_per_key === null)) return { tenant, lease: null };
  const lease = `lease_${randomHex(12)}`;
  const refused = await tenants.getByName(tenant.id).openSocket(lease, tenant.keyId, session, ttlMs);
  if (refused === null) return { tenant, lease };
  const allowed = (refused === "max_sockets" ? max_sockets : sessions_per_key) ?? 0;
  return limitReached(refused, allowed, SOCKET_RETRY_AFTER_S);
}

/** Reads the header the Worker set (trusted: the Worker overwrites any client copy). */
export function socketTenancyOf(headers: Headers): SocketTenancy | null {
  const raw = headers.get(TENANCY_HEADER);
  if (!raw) return null;
  try {
    return JSON.parse(raw) as SocketTenancy;
  } catch {
    return null;
  }
}
