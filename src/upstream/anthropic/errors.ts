/**
 * Anthropic errors → Deltagate's `UpstreamError`s (OpenAI's error shape on the way out). Owns the
 * `error.type` ↔ status table and the mapping: `overloaded_error` (529, a status OpenAI never
 * uses) → 503 `upstream_overloaded`, `server_error`; `rate_limit_error` → 429
 * `rate_limit_exceeded` with the `retry-after` it sent (src/upstream/retry-after.ts), so the
 * retry rules of src/upstream/fallback.ts apply as to every route (429 and 5xx retried before
 * the first event); `not_found_error` → 404 `model_not_found`; other 4xx keep their status with
 * Anthropic's `error.type` as the code; 401/403 → 502 `upstream_auth_failed` (error-mapping.ts).
 * The same mapping serves an in-stream `event: error`.
 * Source: https://docs.anthropic.com/en/api/errors
 */
import { upstreamErrorForStatus } from "../error-mapping.ts";
import { retryAfterMs } from "../retry-after.ts";
import type { UpstreamError } from "../upstream.ts";
import { errorEnvelope } from "./wire.ts";

/** Anthropic's HTTP status of each `error.type`. */
const STATUS_BY_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

/** Anthropic's overload status. */
const OVERLOADED = 529;

/**
 * The `UpstreamError` of an Anthropic error.
 * @param status the HTTP status, or null for an in-stream error (taken from `type`).
 * @param retryAfter ms the upstream asked to wait, or null.
 */
export function anthropicError(
  status: number | null,
  type: string | null,
  message: string,
  retryAfter: number | null = null,
): UpstreamError {
  const actual = status ?? STATUS_BY_TYPE[type ?? ""] ?? 500;
  if (actual === OVERLOADED || type === "overloaded_error") {
    return upstreamErrorForStatus(503, "upstream_overloaded", message, retryAfter);
  }
  if (actual === 404) return upstreamErrorForStatus(404, "model_not_found", message, null, "model");
  if (actual === 429 || actual >= 500) return upstreamErrorForStatus(actual, null, message, retryAfter);
  return upstreamErrorForStatus(actual, type, message);
}

/** The `UpstreamError` of a non-2xx answer (its envelope, its `retry-after`). */
export async function anthropicFailure(response: Response): Promise<UpstreamError> {
  const text = await response.text().catch(() => "");
  let type: string | null = null;
  let message = `The upstream answered HTTP ${response.status}.`;
  try {
    const parsed = errorEnvelope.safeParse(JSON.parse(text));
    if (parsed.success && parsed.data.error) {
      type = parsed.data.error.type ?? null;
      if (parsed.data.error.message) message = parsed.data.error.message;
    }
  } catch {
    // not JSON: the generic message
  }
  return anthropicError(response.status, type, message, retryAfterMs(response.headers));
}
