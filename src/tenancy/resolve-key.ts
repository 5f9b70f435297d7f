/**
 * The one seam between authentication and the control plane: `resolveKey(key) → Tenant | null`.
 * A `DELTAGATE_API_KEYS` key (compared in constant time against every configured one) or a minted
 * key whose signature verifies (api-keys.ts) is resolved through the isolate's `KeyCache` (no
 * round trip when warm); anything else is refused at once.
 * Invariant: every presented key costs the same local work before any lookup — one pass over the
 * configured keys and one HMAC — so how fast a key is refused says nothing about whether it was
 * ever valid, and no unknown key reaches the cache or the control plane.
 */
import type { Config } from "../config/config.ts";
import { safeEqual } from "../crypto/signing.ts";
import { keyHash, parseKey, verifyTag } from "./api-keys.ts";
import { controlKeys } from "./control-crypto.ts";
import { KeyCache } from "./key-cache.ts";
import type { TenancyEnv } from "./tenancy-env.ts";
import { ENV_KEY_ID, type Tenant } from "./tenant.ts";

/** The isolate's cache (one per isolate, shared by every request it serves). */
export const keyCache = new KeyCache();

/** A fixed key that verifies nothing: the HMAC a key without the minted shape still pays for. */
const DUMMY = { tenant: "-", keyId: "000000000000", prefix: "-", signed: "-", tag: "0".repeat(32) };

/**
 * The tenant of a presented key, or null when it is unknown, revoked or malformed.
 * @param track keeps a background cache refresh alive (`ctx.waitUntil`).
 */
export async function resolveKey(
  key: string,
  env: TenancyEnv,
  config: Config,
  track: (p: Promise<unknown>) => void = () => {},
): Promise<Tenant | null> {
  let envTenant: string | null = null;
  for (const [candidate, owner] of config.apiKeys) {
    if (safeEqual(candidate, key)) envTenant = owner;
  }
  const parsed = parseKey(key);
  const keys = controlKeys(config.controlSecret);
  const authentic = keys ? await verifyTag((await keys).signing, parsed ?? DUMMY) : false;
  const tenants = env.TENANTS;
  if (envTenant !== null) {
    if (!tenants) return legacyTenant(envTenant);
    return keyCache.get(
      `${envTenant}/env`,
      () => tenants.getByName(envTenant).resolve(envTenant, null, ENV_KEY_ID),
      keyCache.now(),
      track,
    );
  }
  if (!parsed || !authentic || !tenants) return null;
  return keyCache.get(
    `${parsed.tenant}/${parsed.keyId}`,
    async () => tenants.getByName(parsed.tenant).resolve(parsed.tenant, await keyHash(key), parsed.keyId),
    keyCache.now(),
    track,
  );
}

/**
 * The tenant snapshot of a verified client secret (its claims name the tenant; the signature was
 * checked by the caller), metered as key `secret:<id>`: null when the tenant is gone — no
 * `DELTAGATE_API_KEYS` key and no control-plane row — so a tenant's secrets end with the tenant.
 * Cached like a key (the revocation bound applies).
 */
export async function resolveSecretTenant(
  tenant: string,
  secretId: string,
  env: TenancyEnv,
  config: Config,
  track: (p: Promise<unknown>) => void = () => {},
): Promise<Tenant | null> {
  const keyId = `secret:${secretId}`;
  const fromEnv = [...config.apiKeys.values()].includes(tenant);
  const tenants = env.TENANTS;
  if (!tenants) return fromEnv ? { ...legacyTenant(tenant), keyId } : null;
  return keyCache.get(
    `${tenant}/${keyId}`,
    () =>
      fromEnv
        ? tenants.getByName(tenant).resolve(tenant, null, keyId)
        : tenants.getByName(tenant).resolveForSecret(tenant, keyId),
    keyCache.now(),
    track,
  );
}

/** A `DELTAGATE_API_KEYS` tenant in a deployment without the control plane's bindings. */
function legacyTenant(id: string): Tenant {
  return {
    id,
    keyId: ENV_KEY_ID,
    limits: {
      max_sockets: null,
      sessions_per_key: null,
      turns_per_minute: null,
      tokens_per_day: null,
      request_bytes_per_minute: null,
    },
    settings: {},
    ownUpstreamKey: false,
  };
}
