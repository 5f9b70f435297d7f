/**
 * Google's error shapes for the simulator's Gemini endpoints: the envelope
 * `{"error": {"code", "message", "status", "details"}}` with the canonical status name of each
 * HTTP status (400 INVALID_ARGUMENT, 403 PERMISSION_DENIED, 404 NOT_FOUND, 429
 * RESOURCE_EXHAUSTED with a `google.rpc.RetryInfo` detail, 500 INTERNAL, 503 UNAVAILABLE, 504
 * DEADLINE_EXCEEDED). The same envelope is a `data:` chunk when a stream fails after it began.
 * Source: https://ai.google.dev/gemini-api/docs/troubleshooting (backend error codes),
 * https://cloud.google.com/apis/design/errors (the envelope, RetryInfo).
 */
import type { ServerResponse } from "node:http";
import { baseHeaders } from "../http-util.ts";
import type { JsonObject } from "../json.ts";

/** Google's status name of each HTTP status the Gemini API documents. */
const STATUS_NAMES: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

/** Google's message of each status when the simulator fails on purpose (`fail=status:NNN`). */
const SIMULATED_MESSAGES: Record<number, string> = {
  429: "Resource has been exhausted (e.g. check quota).",
  500: "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
  503: "The model is overloaded. Please try again later.",
  504: "Deadline expired before operation could complete.",
};

/** An error a Gemini endpoint answers with. */
export class GoogleError extends Error {
  readonly code: number;
  readonly status: string;
  /** Seconds of the `RetryInfo.retryDelay` detail (429), or null. */
  readonly retryDelayS: number | null;

  constructor(code: number, message: string, retryDelayS: number | null = null) {
    super(message);
    this.code = code;
    this.status = STATUS_NAMES[code] ?? (code >= 500 ? "INTERNAL" : "INVALID_ARGUMENT");
    this.retryDelayS = retryDelayS;
  }
}

/** 400 `INVALID_ARGUMENT`. */
export function invalidArgument(message: string): GoogleError {
  return new GoogleError(400, message);
}

/** The failure a `fail=status:NNN` directive asks for. */
export function simulatedFailure(code: number, retryDelayS: number | null): GoogleError {
  return new GoogleError(code, SIMULATED_MESSAGES[code] ?? "Simulated upstream failure.", retryDelayS);
}

/** The envelope of `err`. */
export function errorJson(err: GoogleError): JsonObject {
  const error: JsonObject = { code: err.code, message: err.message, status: err.status };
  if (err.retryDelayS !== null) {
    error.details = [
      { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: `${err.retryDelayS}s` },
    ];
  }
  return { error };
}

/** Sends `err` as Google's JSON error envelope. */
export function sendGoogleError(res: ServerResponse, err: GoogleError): void {
  const text = JSON.stringify(errorJson(err));
  res.writeHead(err.code, {
    ...baseHeaders(),
    "content-type": "application/json; charset=UTF-8",
    "content-length": String(Buffer.byteLength(text)),
  });
  res.end(text);
}
