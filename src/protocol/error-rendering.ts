/**
 * The one renderer of errors, for every transport: an `ApiError` becomes OpenAI's HTTP JSON
 * envelope (`{"error":{type,code,message,param}}` with the error's status) or a WebSocket `error`
 * event (`{"type":"error","status",…,"error":{…}}`). Owns the fallback for anything that is not an
 * `ApiError`: it is logged (never sent) and reported as 500 `server_error`.
 * Invariants: the same error renders with the same status, type, code, message and param on HTTP
 * and WebSocket; every rendered field and every log line passes the environment's
 * `SecretRedactor` (a message may quote what a request or an upstream sent).
 * Source: https://platform.openai.com/docs/guides/error-codes,
 *   https://developers.openai.com/api/docs/guides/websocket-mode
 */
import type { SecretRedactor } from "../secrets/redactor.ts";
import { ApiError, type ErrorBody, internalError } from "./errors.ts";

/**
 * The `ApiError` to report for a thrown value; anything else is logged (redacted) and becomes a
 * 500 `server_error`.
 * @param where a short label for the log line of an unexpected error.
 */
export function asApiError(cause: unknown, where: string, redactor: SecretRedactor): ApiError {
  if (cause instanceof ApiError) return cause;
  const detail = cause instanceof Error ? (cause.stack ?? `${cause.name}: ${cause.message}`) : String(cause);
  console.error(where, redactor.text(detail));
  return internalError();
}

/** HTTP: OpenAI's error envelope with the error's status. */
export function errorResponse(error: ApiError, redactor: SecretRedactor): Response {
  return Response.json(
    { error: body(error, redactor) },
    { status: error.status, ...(error.headers ? { headers: error.headers } : {}) },
  );
}

/** WebSocket: the request-level `error` event (with `stream_id` when it belongs to a named lane). */
export function errorEvent(
  error: ApiError,
  redactor: SecretRedactor,
  streamId?: string | null,
): Record<string, unknown> {
  return {
    type: "error",
    status: error.status,
    ...(streamId ? { stream_id: streamId } : {}),
    error: error.headers ? { ...body(error, redactor), headers: error.headers } : body(error, redactor),
  };
}

function body(error: ApiError, redactor: SecretRedactor): ErrorBody {
  return redactor.json(error.toBody());
}
