/**
 * Error values of the simulator and their wire shapes: the HTTP envelope
 * `{"error":{message,type,param,code}}` and the WebSocket request-level error frame
 * `{"type":"error","status",error:{...}}` (spec §1.5, §5).
 */
import type { JsonObject } from "./json.ts";

/** An API error the simulator reports to the client (HTTP status + OpenAI error fields). */
export class SimError extends Error {
  /** HTTP status (also the `status` of a WS error frame). */
  readonly status: number;
  /** OpenAI `error.type`, e.g. `invalid_request_error`, `server_error`. */
  readonly type: string;
  /** OpenAI `error.code`, or null. */
  readonly code: string | null;
  /** OpenAI `error.param`, or null. */
  readonly param: string | null;

  /** Creates an error; `code` and `param` default to null. */
  constructor(
    status: number,
    type: string,
    message: string,
    code: string | null = null,
    param: string | null = null,
  ) {
    super(message);
    this.name = "SimError";
    this.status = status;
    this.type = type;
    this.code = code;
    this.param = param;
  }
}

/** 400 `invalid_request_error` with the given message, param and code. */
export function invalidRequest(
  message: string,
  param: string | null = null,
  code: string | null = null,
): SimError {
  return new SimError(400, "invalid_request_error", message, code, param);
}

/** 400 `previous_response_not_found` with OpenAI's exact wording (spec §1.5). */
export function previousResponseNotFound(id: string): SimError {
  return invalidRequest(
    `Previous response with id '${id}' not found.`,
    "previous_response_id",
    "previous_response_not_found",
  );
}

/**
 * The error a `fail=` directive simulates for `status` (429 → rate limit, 5xx → server error,
 * others → invalid request). Message always starts with "Simulated".
 */
export function simulatedFailure(status: number): SimError {
  if (status === 429) {
    return new SimError(429, "requests", "Simulated rate limit reached.", "rate_limit_exceeded");
  }
  if (status >= 500)
    return new SimError(status, "server_error", "Simulated upstream failure.", "server_error");
  return new SimError(status, "invalid_request_error", `Simulated upstream failure (status ${status}).`);
}

/** HTTP error body `{"error":{message,type,param,code}}`. */
export function errorEnvelope(err: SimError): { error: JsonObject } {
  return { error: { message: err.message, type: err.type, param: err.param, code: err.code } };
}

/** WS request-level error frame `{"type":"error","status",error:{type,code,message,param}}`. */
export function wsErrorFrame(err: SimError): JsonObject {
  return {
    type: "error",
    status: err.status,
    error: { type: err.type, code: err.code, message: err.message, param: err.param },
  };
}

/** Converts any thrown value into a SimError (non-SimErrors become 500 server_error). */
export function toSimError(err: unknown): SimError {
  if (err instanceof SimError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new SimError(500, "server_error", `Simulator internal error: ${message}`, "server_error");
}
