/**
 * OpenAI-shaped errors: one class for every error Deltagate reports, plus constructors for the
 * codes and messages OpenAI uses. The same value becomes an HTTP JSON envelope (`{"error":{…}}`)
 * or a WebSocket `error` event with `status` (error-rendering.ts).
 * Source: https://platform.openai.com/docs/guides/error-codes, https://developers.openai.com/api/docs/guides/websocket-mode
 * Invariant: messages never contain secrets (API keys are never interpolated).
 */

/** The `error` object of OpenAI's envelope. */
export interface ErrorBody {
  type: string;
  code: string | null;
  message: string;
  param: string | null;
}

/** An error with an HTTP status, reported as OpenAI reports it. */
export class ApiError extends Error {
  readonly status: number;
  readonly type: string;
  readonly code: string | null;
  readonly param: string | null;
  /**
   * Response headers that go with the error (`retry-after` of a rate limit): HTTP headers, and
   * `error.headers` of a WebSocket `error` event, where the `openai` SDK and Codex read them.
   */
  readonly headers: Readonly<Record<string, string>> | undefined;

  /**
   * @param status HTTP status (4xx/5xx) reported on HTTP and as `status` on WebSocket error events.
   * @param body OpenAI error fields; `message` is shown to the client verbatim.
   */
  constructor(status: number, body: ErrorBody, headers?: Record<string, string>) {
    super(body.message);
    this.name = "ApiError";
    this.status = status;
    this.type = body.type;
    this.code = body.code;
    this.param = body.param;
    this.headers = headers;
  }

  /** The `{type, code, message, param}` object placed under `error`. */
  toBody(): ErrorBody {
    return { type: this.type, code: this.code, message: this.message, param: this.param };
  }
}

/** 400 `invalid_request_error` helper. */
export function invalidRequest(message: string, param: string | null = null, code: string | null = null) {
  return new ApiError(400, { type: "invalid_request_error", code, message, param });
}

/** 400 `previous_response_not_found` with OpenAI's wording. */
export function previousResponseNotFound(id: string): ApiError {
  return invalidRequest(
    `Previous response with id '${id}' not found.`,
    "previous_response_id",
    "previous_response_not_found",
  );
}

/** 404 for a conversation id that is unknown, or another tenant's (docs/conversations.md). */
export function conversationNotFound(id: string, param: string | null = null): ApiError {
  return new ApiError(404, {
    type: "invalid_request_error",
    code: null,
    message: `Conversation with id '${id}' not found.`,
    param,
  });
}

/** 404 for a response id that is unknown, or not visible to the caller. */
export function responseNotFound(id: string): ApiError {
  return new ApiError(404, {
    type: "invalid_request_error",
    code: null,
    message: `Response with id '${id}' not found.`,
    param: null,
  });
}

/** 401 `invalid_api_key`; never echoes the key that was sent. */
export function invalidApiKey(): ApiError {
  return new ApiError(401, {
    type: "invalid_request_error",
    code: "invalid_api_key",
    message: "Incorrect or missing API key. Send `Authorization: Bearer <key>` or an `api-key` header.",
    param: null,
  });
}

/** 400 when the 60-minute WebSocket lifetime is reached (exact OpenAI wording, WebSocket mode guide). */
export function connectionLimitReached(minutes: number): ApiError {
  return invalidRequest(
    `Responses websocket connection limit reached (${minutes} minutes). Create a new websocket connection to continue.`,
    null,
    "websocket_connection_limit_reached",
  );
}

/** 500 for unexpected failures; the cause is logged, not sent. */
export function internalError(): ApiError {
  return new ApiError(500, {
    type: "server_error",
    code: "server_error",
    message: "The server had an error while processing your request.",
    param: null,
  });
}

/** 409 when a response's event stream cannot be replayed (log over its cap, or never persisted). */
export function eventLogUnavailable(id: string): ApiError {
  return new ApiError(409, {
    type: "invalid_request_error",
    code: "event_log_unavailable",
    message: `The event stream of response '${id}' cannot be replayed; retrieve the response instead.`,
    param: null,
  });
}
