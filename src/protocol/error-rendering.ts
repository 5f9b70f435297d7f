/**
 * The one renderer of errors, for every transport: an `ApiError` becomes OpenAI's HTTP JSON
 * envelope (`{"error":{type,code,message,param}}` with the error's status) or a WebSocket `error`
 * event (`{"type":"error","status",…,"error":{…}}`). Owns the fallback for anything that is not an
 * `ApiError`: it is logged (never sent) and reported as 500 `server_error`.
 * Invariant: the same error renders with the same status, type, code, message and param on HTTP
 * and WebSocket.
 * Source: https://platform.openai.com/docs/guides/error-codes,
 *   https://developers.openai.com/api/docs/guides/websocket-mode
 */
import { ApiError, internalError } from "./errors.ts";

/**
 * The `ApiError` to report for a thrown value.
 * @param where a short label for the log line of an unexpected error.
 */
export function asApiError(cause: unknown, where: string): ApiError {
  if (cause instanceof ApiError) return cause;
  console.error(where, cause);
  return internalError();
}

/** HTTP: OpenAI's error envelope with the error's status. */
export function errorResponse(error: ApiError): Response {
  return Response.json({ error: error.toBody() }, { status: error.status });
}

/** WebSocket: the request-level `error` event (with `stream_id` when it belongs to a named lane). */
export function errorEvent(error: ApiError, streamId?: string | null): Record<string, unknown> {
  return {
    type: "error",
    status: error.status,
    ...(streamId ? { stream_id: streamId } : {}),
    error: error.toBody(),
  };
}
