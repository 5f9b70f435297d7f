/**
 * Google API errors → Deltagate's `UpstreamError`s (OpenAI's error shape on the way out). Owns the
 * mapping of Google's envelope `{error: {code, message, status, details}}`:
 * - 429 `RESOURCE_EXHAUSTED` → 429 `rate_limit_exceeded`, waiting what its
 *   `google.rpc.RetryInfo.retryDelay` (a duration such as `"37s"`) or a `Retry-After` header
 *   asks, so the retry rules of src/upstream/fallback.ts apply as to every route (429 and 5xx
 *   retried before the first event);
 * - 503 `UNAVAILABLE` ("The model is overloaded") → 503 `upstream_overloaded`; other 5xx keep
 *   their status (`upstream_error`);
 * - 404 `NOT_FOUND` (a model the key cannot use) → 404 `model_not_found`;
 * - 401 / 403, and Google's 400 for a bad key (`ErrorInfo.reason` `API_KEY_INVALID`) → 502
 *   `upstream_auth_failed` (error-mapping.ts: the upstream's text is never shown);
 * - other 4xx keep their status, with Google's `status` in lower case as the code
 *   (`invalid_argument`, `failed_precondition`).
 * The same mapping serves an error chunk inside the stream (`data: {"error": …}`).
 * Source: https://ai.google.dev/gemini-api/docs/troubleshooting (backend error codes),
 * https://ai.google.dev/gemini-api/docs/rate-limits, https://cloud.google.com/apis/design/errors
 * (the envelope, `google.rpc.RetryInfo`, `google.rpc.ErrorInfo`).
 */
import { upstreamErrorForStatus } from "../error-mapping.ts";
import { retryAfterMs } from "../retry-after.ts";
import type { UpstreamError } from "../upstream.ts";
import { type ErrorEnvelope, errorEnvelope } from "./wire.ts";

const RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo";

/** A protobuf JSON duration (`"37s"`, `"0.5s"`) in ms, or null. */
export function durationMs(value: string | null | undefined): number | null {
  const match = /^(\d+(?:\.\d+)?)s$/.exec(value?.trim() ?? "");
  return match?.[1] ? Math.round(Number(match[1]) * 1000) : null;
}

/** The `retryDelay` of the envelope's `RetryInfo`, in ms, or null. */
function retryDelayOf(envelope: ErrorEnvelope | null): number | null {
  for (const detail of envelope?.error.details ?? []) {
    if (detail["@type"] === RETRY_INFO) return durationMs(detail.retryDelay);
  }
  return null;
}

function keyRejected(envelope: ErrorEnvelope | null): boolean {
  return (envelope?.error.details ?? []).some(
    (detail) => (detail as { reason?: unknown }).reason === "API_KEY_INVALID",
  );
}

/**
 * The `UpstreamError` of a Google error.
 * @param status the HTTP status, or null for an in-stream error (taken from `error.code`).
 * @param envelope the parsed envelope, or null when the body was not one.
 * @param retryAfter ms a `Retry-After` header asked to wait, or null.
 */
export function geminiError(
  status: number | null,
  envelope: ErrorEnvelope | null,
  retryAfter: number | null = null,
): UpstreamError {
  const actual = status ?? envelope?.error.code ?? 500;
  const message = envelope?.error.message || `The upstream answered HTTP ${actual}.`;
  if (keyRejected(envelope)) return upstreamErrorForStatus(401, null, message);
  if (actual === 429) {
    return upstreamErrorForStatus(429, "rate_limit_exceeded", message, retryDelayOf(envelope) ?? retryAfter);
  }
  if (actual === 503) return upstreamErrorForStatus(503, "upstream_overloaded", message, retryAfter);
  if (actual >= 500) return upstreamErrorForStatus(actual, null, message, retryAfter);
  if (actual === 404) return upstreamErrorForStatus(404, "model_not_found", message, null, "model");
  const code = envelope?.error.status ? envelope.error.status.toLowerCase() : null;
  return upstreamErrorForStatus(actual, code, message);
}

/** The envelope of a parsed JSON value, or null. */
export function asEnvelope(value: unknown): ErrorEnvelope | null {
  const parsed = errorEnvelope.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/** The `UpstreamError` of a non-2xx answer (its envelope, its `Retry-After`). */
export async function geminiFailure(response: Response): Promise<UpstreamError> {
  const text = await response.text().catch(() => "");
  let envelope: ErrorEnvelope | null = null;
  try {
    envelope = asEnvelope(JSON.parse(text));
  } catch {
    // not JSON: the generic message
  }
  return geminiError(response.status, envelope, retryAfterMs(response.headers));
}
