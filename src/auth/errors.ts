/**
 * The errors of authentication and of client-secret bindings, each with its own code so a client
 * can tell "fetch a new secret" (`client_secret_expired`) from "this secret will never work"
 * (`client_secret_invalid`) from "not with this secret" (a binding).
 * Invariant: no message quotes a presented credential (OpenAI's envelope, src/protocol/errors.ts).
 */
import { ApiError } from "../protocol/errors.ts";
import type { SecretFailure } from "./client-secret.ts";

function refused(status: number, code: string, message: string, param: string | null = null): ApiError {
  return new ApiError(status, { type: "invalid_request_error", code, message, param });
}

const FAILURES: Record<SecretFailure, string> = {
  malformed:
    "The client secret is malformed: send the `value` of POST /v1/client_secrets as it was returned.",
  invalid:
    "The client secret is invalid: its signature does not check (forged, altered, or signed with a key since rotated). Mint a new one.",
  expired: "The client secret has expired. Mint a new one (POST /v1/client_secrets) and reconnect.",
};

/** 401 `client_secret_malformed` / `client_secret_invalid` / `client_secret_expired`. */
export function clientSecretRefused(failure: SecretFailure): ApiError {
  return refused(401, `client_secret_${failure}`, FAILURES[failure]);
}

/** 401 `client_secret_invalid`: this deployment has no signing key, so it accepts no secret. */
export function clientSecretsNotEnabled(): ApiError {
  return refused(
    401,
    "client_secret_invalid",
    "Client secrets are not enabled on this deployment (DELTAGATE_SECRET is not set).",
  );
}

/** 501 on `POST /v1/client_secrets` when no signing key is configured (the operator's to fix). */
export function clientSecretsNotConfigured(): ApiError {
  return new ApiError(501, {
    type: "server_error",
    code: "client_secrets_not_configured",
    message: "Client secrets are not enabled on this deployment: set the DELTAGATE_SECRET secret.",
    param: null,
  });
}

/** 401 `client_secret_tenant_unknown`: its tenant has no API key any more (secrets die with their tenant). */
export function clientSecretTenantUnknown(): ApiError {
  return refused(
    401,
    "client_secret_tenant_unknown",
    "The client secret's tenant is not configured on this deployment.",
  );
}

/** 401 `client_secret_session_mismatch`: the request names another session than the secret's. */
export function clientSecretSessionMismatch(): ApiError {
  return refused(
    401,
    "client_secret_session_mismatch",
    "This client secret is bound to another session: omit the session header and `?session=`, or name the secret's session.",
    "session_id",
  );
}

/** 403 `client_secret_not_allowed`: a client secret may not mint secrets. */
export function clientSecretCannotMint(): ApiError {
  return refused(
    403,
    "client_secret_not_allowed",
    "A client secret cannot mint client secrets: call POST /v1/client_secrets with a tenant API key, from your backend.",
  );
}

/**
 * 403 `client_secret_not_allowed`: a client secret reaches only its session, never a tenant-wide
 * route (`GET /v1/usage`: the tenant's whole ledger).
 */
export function clientSecretNotTenantWide(): ApiError {
  return refused(
    403,
    "client_secret_not_allowed",
    "A client secret reaches only its own session: this route is tenant-wide and needs a tenant API key, from your backend.",
  );
}

/**
 * 401 `api_key_not_allowed_here`: a tenant's long-lived key in the `Sec-WebSocket-Protocol` offer or
 * the URL, where proxies and servers log it.
 */
export function apiKeyNotAllowedHere(): ApiError {
  return refused(
    401,
    "api_key_not_allowed_here",
    "A tenant API key may not be sent in the WebSocket subprotocol or the URL, where proxies log it. Mint a client secret (POST /v1/client_secrets) and send that instead, or send the key in the `Authorization` header.",
  );
}

/** 400 `websocket_protocol_required`: the offer holds only the credential, so there is nothing to echo. */
export function websocketProtocolRequired(): ApiError {
  return refused(
    400,
    "websocket_protocol_required",
    'Offer a protocol besides the credential, e.g. `new WebSocket(url, ["responses", "openai-insecure-api-key.<client secret>"])`: the handshake echoes it, and browsers fail a handshake that offered protocols and got none back.',
  );
}

/** 403 `origin_not_allowed`: the request's `Origin` is not in `CORS_ALLOWED_ORIGINS`. */
export function originNotAllowed(): ApiError {
  return refused(403, "origin_not_allowed", "This origin is not allowed (CORS_ALLOWED_ORIGINS).");
}

/**
 * 403 `demo_origin_not_allowed`: the unauthenticated demo minting route answers only its own page,
 * a browser request whose `Origin` is the Worker's own.
 */
export function demoOriginNotAllowed(): ApiError {
  return refused(
    403,
    "demo_origin_not_allowed",
    "POST /demo/client_secret answers only the demo page this server serves: a request with its own `Origin` header.",
  );
}

/**
 * 415 `unsupported_content_type`: the demo minting route takes only `Content-Type: application/json`,
 * which a page on another origin cannot send without a preflight.
 */
export function demoContentTypeNotAllowed(): ApiError {
  return refused(
    415,
    "unsupported_content_type",
    "POST /demo/client_secret takes only `Content-Type: application/json`.",
  );
}

/** 403 `client_secret_model_not_allowed`: the model is not among the secret's `models`. */
export function modelNotAllowed(model: string): ApiError {
  return refused(
    403,
    "client_secret_model_not_allowed",
    `The model '${model.slice(0, 256)}' is not allowed for this client secret.`,
    "model",
  );
}

/** 413 `client_secret_request_too_large`: over the secret's `max_request_bytes`. */
export function requestTooLargeForSecret(limit: number): ApiError {
  return refused(
    413,
    "client_secret_request_too_large",
    `The request is larger than this client secret allows (max_request_bytes: ${limit}).`,
  );
}

/** 403 `client_secret_turns_exhausted`: the secret has created its `max_turns` responses. */
export function turnsExhausted(limit: number): ApiError {
  return refused(
    403,
    "client_secret_turns_exhausted",
    `This client secret has used all of its turns (max_turns: ${limit}). Mint a new one.`,
  );
}
