/**
 * Mapping of upstream failures to `UpstreamError`s, shared by every adapter (Responses HTTP,
 * Responses WebSocket, Chat Completions). Owns the status mapping (401/403 → 502
 * `upstream_auth_failed` with a fixed message, never the upstream's text; 429 kept with its
 * `Retry-After`; 5xx kept; other 4xx kept).
 * Messages other than the 401/403 one are the upstream's own text: every one of them is redacted
 * (configured secrets by value, known key shapes) and capped by the redaction stage
 * (src/pipeline/redaction-stage.ts), the one path an upstream's errors take to the engine.
 * Source: https://platform.openai.com/docs/guides/error-codes
 */
import { z } from "zod";
import { retryAfterMs } from "./retry-after.ts";
import { UpstreamError } from "./upstream.ts";

const errorEnvelope = z.looseObject({
  error: z
    .looseObject({ message: z.string().optional(), code: z.string().nullish(), param: z.string().nullish() })
    .optional(),
});

/**
 * Maps a failure while reading an upstream stream: `UpstreamError`s and aborts pass through,
 * anything else (network loss, decoder errors) becomes a 502 "lost mid-stream" `UpstreamError`.
 */
export function asUpstreamError(cause: unknown, signal: AbortSignal): unknown {
  if (cause instanceof UpstreamError || signal.aborted) return cause;
  return new UpstreamError(502, "upstream_error", "The upstream connection was lost mid-stream.");
}

/**
 * Maps a non-2xx (or bodiless) upstream HTTP response to an `UpstreamError`; the OpenAI error
 * envelope's message/code/param are kept (the redaction stage redacts them).
 */
export async function failureOf(response: Response): Promise<UpstreamError> {
  const text = await response.text().catch(() => "");
  let message = `The upstream answered HTTP ${response.status}.`;
  let code: string | null = null;
  let param: string | null = null;
  try {
    const parsed = errorEnvelope.safeParse(JSON.parse(text));
    if (parsed.success && parsed.data.error) {
      if (parsed.data.error.message) message = parsed.data.error.message;
      code = parsed.data.error.code ?? null;
      param = parsed.data.error.param ?? null;
    }
  } catch {
    // not JSON: keep the generic message
  }
  return upstreamErrorForStatus(response.status, code, message, retryAfterMs(response.headers), param);
}

/**
 * The `UpstreamError` for an upstream failure status (an HTTP status, or the `status` of a
 * WebSocket error frame). `message` is dropped for 401/403; `retryAfter` (ms, from
 * `retryAfterMs`) is kept on 429/5xx errors for the retry logic (src/upstream/fallback.ts);
 * `param` (the upstream error's) on other 4xx errors.
 */
export function upstreamErrorForStatus(
  status: number,
  code: string | null,
  message: string,
  retryAfter: number | null = null,
  param: string | null = null,
): UpstreamError {
  if (status === 401 || status === 403) {
    return new UpstreamError(
      502,
      "upstream_auth_failed",
      "The upstream rejected Deltagate's credentials.",
      "server_error",
    );
  }
  if (status === 429)
    return new UpstreamError(429, code ?? "rate_limit_exceeded", message, "rate_limit_error", retryAfter);
  if (status >= 500)
    return new UpstreamError(status, code ?? "upstream_error", message, "server_error", retryAfter);
  const reported = status >= 400 ? status : 502;
  const type = reported >= 500 ? "server_error" : "invalid_request_error";
  return new UpstreamError(reported, code ?? "upstream_error", message, type, null, param);
}
