/**
 * Authentication of client requests (`Authorization: Bearer <key>` as OpenAI, or Azure's
 * `api-key`: https://platform.openai.com/docs/api-reference/authentication). Owns reading the
 * presented key; resolving it to a tenant is the control plane's one seam, `resolveKey`
 * (src/tenancy/resolve-key.ts). Invariant: keys are compared in constant time and never logged
 * or echoed.
 */
import type { Config } from "../config/config.ts";
import { presentedKey } from "../tenancy/presented-key.ts";
import { resolveKey } from "../tenancy/resolve-key.ts";
import type { TenancyEnv } from "../tenancy/tenancy-env.ts";
import type { Tenant } from "../tenancy/tenant.ts";

/** The tenant of the presented key, or null when it is missing, unknown or revoked. */
export async function authenticate(
  headers: Headers,
  env: TenancyEnv,
  config: Config,
  track?: (p: Promise<unknown>) => void,
): Promise<Tenant | null> {
  const key = presentedKey(headers);
  if (!key) return null;
  return resolveKey(key, env, config, track);
}
