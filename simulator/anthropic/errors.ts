/**
 * Anthropic's error shapes for the simulator's `/v1/messages`: the HTTP envelope
 * `{"type":"error","error":{"type","message"},"request_id"}` and the status ↔ `error.type` table
 * (400 invalid_request_error, 401 authentication_error, 403 permission_error, 404
 * not_found_error, 413 request_too_large, 429 rate_limit_error, 500 api_error, 529
 * overloaded_error). The same `error` object rides in an in-stream `event: error`.
 * Source: https://docs.anthropic.com/en/api/errors
 */
import type { ServerResponse } from "node:http";
import { baseHeaders } from "../http-util.ts";
import { newId } from "../ids.ts";

/** Anthropic's `error.type` for each HTTP status it documents. */
const TYPE_BY_STATUS: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

/** An error the Anthropic endpoint answers with. */
export class AnthropicError extends Error {
  readonly status: number;
  readonly type: string;
  /** Seconds for a `retry-after` header (429, 529), or null. */
  readonly retryAfterS: number | null;

  constructor(status: number, message: string, retryAfterS: number | null = null) {
    super(message);
    this.status = status;
    this.type = TYPE_BY_STATUS[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
    this.retryAfterS = retryAfterS;
  }
}

/** 400 `invalid_request_error`. */
export function invalid(message: string): AnthropicError {
  return new AnthropicError(400, message);
}

/** The `error` object of an envelope or of an in-stream `error` event. */
export function errorObject(err: AnthropicError): { type: string; message: string } {
  return { type: err.type, message: err.message };
}

/** Sends `err` as Anthropic's JSON error envelope (with `retry-after` when set). */
export function sendAnthropicError(res: ServerResponse, err: AnthropicError): void {
  const requestId = newId("req_");
  const text = JSON.stringify({ type: "error", error: errorObject(err), request_id: requestId });
  const headers: Record<string, string> = {
    ...baseHeaders(),
    "request-id": requestId,
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(text)),
  };
  if (err.retryAfterS !== null) headers["retry-after"] = String(err.retryAfterS);
  res.writeHead(err.status, headers);
  res.end(text);
}
