/**
 * Minting client secrets (src/auth/client-secret.ts), the reusable part and its two routes:
 * - `POST /v1/client_secrets`, authenticated with a tenant API key (a client secret may not mint),
 *   shaped like OpenAI's `POST /v1/realtime/client_secrets`: request
 *   `{"expires_after":{"anchor":"created_at","seconds":10…7200},"session":{"id","models","max_turns","max_request_bytes"}}`
 *   (every field optional; `seconds` 600 by default), response
 *   `{"value":"ek_…","expires_at":<unix s>,"session":{"id","models","max_turns","max_request_bytes"}}`;
 * - `POST /demo/client_secret`, development only: the same, without authentication, for the tenant
 *   `DEMO_CLIENT_SECRET_TENANT` names; absent (404) unless that setting is set (`npm start` sets it).
 *   It answers only a same-origin browser request — `Origin` the Worker's own origin (403
 *   `demo_origin_not_allowed`) and `Content-Type: application/json` (415), a type a page on
 *   another origin cannot send without a preflight — whatever `CORS_ALLOWED_ORIGINS` says, so no
 *   page elsewhere can mint with it (https://fetch.spec.whatwg.org/#cors-safelisted-request-header).
 * Owns the request's validation and the choice of the session: the one named, else a fresh one.
 * Invariants: every secret is bound to exactly one session of its tenant; the response is never
 * cached (`Cache-Control: no-store`); nothing is stored.
 */
import type { Context } from "hono";
import { z } from "zod";
import {
  type ClientSecretClaims,
  DEFAULT_TTL_SECONDS,
  MAX_TTL_SECONDS,
  MIN_TTL_SECONDS,
  mintClientSecret,
} from "../auth/client-secret.ts";
import {
  clientSecretsNotConfigured,
  demoContentTypeNotAllowed,
  demoOriginNotAllowed,
} from "../auth/errors.ts";
import { parseConfig } from "../config/config.ts";
import { readBodyText } from "../http/request-body.ts";
import { zodToApiError } from "../protocol/client-events.ts";
import { ApiError } from "../protocol/errors.ts";
import { parseClientJson } from "../protocol/json-limits.ts";
import { MAX_REQUEST_BYTES } from "../protocol/size-limits.ts";
import { randomToken } from "../util/ids.ts";
import type { AppEnv } from "./app-env.ts";
import { isValidSessionId, newSessionId } from "./session-id.ts";

/** Most models one secret may list, and the longest model id: they travel inside the secret. */
export const MAX_BOUND_MODELS = 16;
export const MAX_BOUND_MODEL_CHARS = 128;
/** Largest `max_turns`. */
export const MAX_BOUND_TURNS = 1_000_000;

/** The body of `POST /v1/client_secrets`. Unknown fields are refused, so a typo is not silently ignored. */
export const clientSecretRequest = z.strictObject({
  expires_after: z
    .strictObject({
      anchor: z.literal("created_at").default("created_at"),
      seconds: z.number().int().min(MIN_TTL_SECONDS).max(MAX_TTL_SECONDS).default(DEFAULT_TTL_SECONDS),
    })
    .nullish(),
  session: z
    .strictObject({
      id: z
        .string()
        .refine(isValidSessionId, "Invalid session id: use 1-200 letters, digits, '_', '.', ':' or '-'.")
        .nullish(),
      models: z.array(z.string().min(1).max(MAX_BOUND_MODEL_CHARS)).min(1).max(MAX_BOUND_MODELS).nullish(),
      max_turns: z.number().int().min(1).max(MAX_BOUND_TURNS).nullish(),
      max_request_bytes: z.number().int().min(1).max(MAX_REQUEST_BYTES).nullish(),
    })
    .nullish(),
});
export type ClientSecretRequest = z.infer<typeof clientSecretRequest>;

/** The body of a minted secret's response. */
export interface ClientSecretResponse {
  value: string;
  expires_at: number;
  session: {
    id: string;
    models: string[] | null;
    max_turns: number | null;
    max_request_bytes: number | null;
  };
}

/**
 * Mints a client secret of `tenant` for `request` (the reusable part: a backend in the same
 * deployment may call it with the signing key directly).
 * @param nowSeconds the creation time (`expires_after.anchor`), Unix seconds.
 */
export async function issueClientSecret(
  signingKey: string,
  tenant: string,
  request: ClientSecretRequest,
  nowSeconds: number,
): Promise<ClientSecretResponse> {
  const session = request.session ?? {};
  const claims: ClientSecretClaims = {
    tenant,
    id: randomToken(12),
    sessionId: session.id ?? newSessionId(),
    expiresAt: nowSeconds + (request.expires_after?.seconds ?? DEFAULT_TTL_SECONDS),
    models: session.models ?? null,
    maxTurns: session.max_turns ?? null,
    maxRequestBytes: session.max_request_bytes ?? null,
  };
  return {
    value: await mintClientSecret(signingKey, claims),
    expires_at: claims.expiresAt,
    session: {
      id: claims.sessionId,
      models: claims.models ? [...claims.models] : null,
      max_turns: claims.maxTurns,
      max_request_bytes: claims.maxRequestBytes,
    },
  };
}

/** The validated body of a minting request (an empty body means every default). */
async function mintingRequest(request: Request): Promise<ClientSecretRequest> {
  const text = await readBodyText(request);
  const parsed = clientSecretRequest.safeParse(text.trim() === "" ? {} : parseClientJson(text));
  if (!parsed.success) throw zodToApiError(parsed.error);
  return parsed.data;
}

/** Mints for `tenant` and answers with the secret (never cached). */
async function mintResponse(c: Context<AppEnv>, tenant: string): Promise<Response> {
  const { signingKey } = parseConfig(c.env).clientSecrets;
  if (!signingKey) throw clientSecretsNotConfigured();
  const request = await mintingRequest(c.req.raw);
  const body = await issueClientSecret(await signingKey, tenant, request, Math.floor(Date.now() / 1000));
  return c.json(body, 200, { "cache-control": "no-store" });
}

/** `POST /v1/client_secrets` (authenticated with a tenant key). */
export function createClientSecret(c: Context<AppEnv>): Promise<Response> {
  return mintResponse(c, c.get("tenant"));
}

/**
 * Refuses a demo minting request that is not a same-origin browser request: its `Origin` must be
 * the Worker's own (the origin of the URL it was sent to, where the demo page is served) and its
 * media type `application/json`.
 * @throws {ApiError} 403 `demo_origin_not_allowed`, 415 `unsupported_content_type`.
 */
function assertSameOriginPage(request: Request): void {
  const origin = request.headers.get("origin");
  if (origin === null || origin !== new URL(request.url).origin) throw demoOriginNotAllowed();
  const mediaType = request.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase();
  if (mediaType !== "application/json") throw demoContentTypeNotAllowed();
}

/** `POST /demo/client_secret`: development only (`DEMO_CLIENT_SECRET_TENANT`), otherwise 404. */
export function createDemoClientSecret(c: Context<AppEnv>): Promise<Response> {
  const tenant = parseConfig(c.env).clientSecrets.demoTenant;
  if (!tenant) {
    throw new ApiError(404, {
      type: "invalid_request_error",
      code: "not_found",
      message: "Unknown route: POST /demo/client_secret (enabled only by DEMO_CLIENT_SECRET_TENANT).",
      param: null,
    });
  }
  assertSameOriginPage(c.req.raw);
  return mintResponse(c, tenant);
}
