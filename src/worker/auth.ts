/**
 * Authentication of client requests: a middleware factory that resolves the request's credential
 * to a `Principal` (its tenant and, for a client secret, the secret's claims) or throws the
 * `ApiError` that says why not, like every route (the app's one error handler renders it).
 * Where a credential may travel:
 * - `Authorization: Bearer <key or client secret>` (OpenAI's form) or Azure's `api-key` header, on
 *   every route (https://platform.openai.com/docs/api-reference/authentication);
 * - on a WebSocket upgrade only, for browsers, which cannot set headers on a socket: the
 *   `Sec-WebSocket-Protocol` entry `openai-insecure-api-key.<credential>` (OpenAI's Realtime browser
 *   form, openai-node `src/realtime/websocket.ts`) or `?client_secret=` (`?api_key=`).
 *   Those places are logged by proxies, so only a client secret (short-lived, bound to one
 *   session) is accepted there; a tenant key is refused (401 `api_key_not_allowed_here`) unless
 *   `ALLOW_INSECURE_API_KEY` is on.
 * Owns the order credentials are looked for (header, subprotocol, query: the first found is the
 * one used); resolving a key to its tenant is the control plane's one seam, `resolveKey`
 * (src/tenancy/resolve-key.ts), which also gives the tenant's snapshot (limits, settings).
 * Invariants: a key costs the same local work whether or not it was ever valid (resolve-key.ts); a client secret's signature is
 * checked before anything it says is believed (src/auth/client-secret.ts); a credential is never
 * logged or echoed (the 101 echoes a non-secret protocol of the offer, `echoedProtocol`).
 */
import type { MiddlewareHandler } from "hono";
import { isClientSecret, verifyClientSecret } from "../auth/client-secret.ts";
import {
  apiKeyNotAllowedHere,
  clientSecretCannotMint,
  clientSecretRefused,
  clientSecretsNotEnabled,
  clientSecretTenantUnknown,
} from "../auth/errors.ts";
import { type Config, parseConfig } from "../config/config.ts";
import { type ApiError, invalidApiKey } from "../protocol/errors.ts";
import { presentedKey } from "../tenancy/presented-key.ts";
import { resolveKey, resolveSecretTenant } from "../tenancy/resolve-key.ts";
import type { TenancyEnv } from "../tenancy/tenancy-env.ts";
import type { AppEnv, Principal } from "./app-env.ts";

/** The `Sec-WebSocket-Protocol` entry prefix that carries a credential (OpenAI's). */
export const CREDENTIAL_PROTOCOL_PREFIX = "openai-insecure-api-key.";
/** Query parameters that may carry a credential on a WebSocket upgrade. */
export const CREDENTIAL_QUERY_PARAMS = ["client_secret", "api_key"] as const;

/** Where a credential was found. */
type Source = "header" | "protocol" | "query";

/** True when `request` asks for a WebSocket upgrade. */
export function isUpgrade(request: Request): boolean {
  return request.headers.get("upgrade")?.toLowerCase() === "websocket";
}

/** The entries of a `Sec-WebSocket-Protocol` offer, in order. */
export function offeredProtocols(headers: Headers): string[] {
  const offer = headers.get("sec-websocket-protocol");
  if (!offer) return [];
  return offer
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
}

/**
 * The protocol the 101 echoes: the first offered entry that is not a credential, or null when
 * nothing was offered or only credentials were (RFC 6455 §4.2.2: the server selects one of the
 * client's protocols; browsers and `ws` fail a handshake that offered some and got none).
 */
export function echoedProtocol(headers: Headers): string | null {
  return offeredProtocols(headers).find((entry) => !entry.startsWith(CREDENTIAL_PROTOCOL_PREFIX)) ?? null;
}

/** The credential a request presents and where it was found, or null. */
function presented(request: Request): { value: string; source: Source } | null {
  const fromHeader = presentedKey(request.headers);
  if (fromHeader) return { value: fromHeader, source: "header" };
  if (!isUpgrade(request)) return null;
  const entry = offeredProtocols(request.headers).find((p) => p.startsWith(CREDENTIAL_PROTOCOL_PREFIX));
  const fromProtocol = entry?.slice(CREDENTIAL_PROTOCOL_PREFIX.length);
  if (fromProtocol) return { value: fromProtocol, source: "protocol" };
  const query = new URL(request.url).searchParams;
  for (const name of CREDENTIAL_QUERY_PARAMS) {
    const value = query.get(name)?.trim();
    if (value) return { value, source: "query" };
  }
  return null;
}

/** Options of `authentication`. */
export interface AuthOptions {
  /**
   * Whether a client secret may call the route (false: `POST /v1/client_secrets`, which mints
   * them, and the tenant-wide routes, `GET /v1/usage`).
   */
  clientSecrets: boolean;
  /** The 403 a client secret gets where it may not go (default: the minting route's). */
  refused?: () => ApiError;
}

/**
 * The principal of `request`.
 * @throws {ApiError} 401 `invalid_api_key` (missing, unknown or revoked), `client_secret_malformed` /
 *   `_invalid` / `_expired` / `_tenant_unknown`, `api_key_not_allowed_here`; 403
 *   `client_secret_not_allowed` for a valid secret on a route that takes none.
 */
export async function authenticate(
  request: Request,
  env: TenancyEnv,
  config: Config,
  options: AuthOptions,
  track?: (p: Promise<unknown>) => void,
): Promise<Principal> {
  const credential = presented(request);
  if (!credential) throw invalidApiKey();
  if (isClientSecret(credential.value)) {
    const { signingKey } = config.clientSecrets;
    if (!signingKey) throw clientSecretsNotEnabled();
    const verified = await verifyClientSecret(
      credential.value,
      await signingKey,
      Math.floor(Date.now() / 1000),
    );
    if (!verified.ok) throw clientSecretRefused(verified.failure);
    const { claims } = verified;
    // A tenant that is gone (no key in DELTAGATE_API_KEYS, no control-plane row) loses its secrets with it.
    const account = await resolveSecretTenant(claims.tenant, claims.id, env, config, track);
    if (!account) throw clientSecretTenantUnknown();
    if (!options.clientSecrets) throw (options.refused ?? clientSecretCannotMint)();
    return { tenant: claims.tenant, secret: claims, account };
  }
  const account = await resolveKey(credential.value, env, config, track);
  if (!account) throw invalidApiKey();
  if (credential.source !== "header" && !config.clientSecrets.allowInsecureApiKey)
    throw apiKeyNotAllowedHere();
  return { tenant: account.id, secret: null, account };
}

/** Middleware: authenticates the request (see `authenticate`) and sets `principal` and `tenant`. */
export function authentication(options: AuthOptions): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const track = (p: Promise<unknown>) => c.executionCtx.waitUntil(p);
    const principal = await authenticate(c.req.raw, c.env, parseConfig(c.env), options, track);
    c.set("principal", principal);
    c.set("tenant", principal.tenant);
    await next();
  };
}
