/**
 * The errors of a tenant limit, as OpenAI reports a rate limit: status 429, code
 * `rate_limit_exceeded`, type `requests` or `tokens`, a message naming the limit, and when to
 * retry: the `retry-after` header (seconds) on HTTP, and in `error.headers` of a WebSocket `error`
 * event (whose `status` is 429), where the `openai` SDK's `ResponseWsError` and Codex read the
 * headers of an error frame.
 * Source: https://platform.openai.com/docs/guides/error-codes,
 *   https://platform.openai.com/docs/guides/rate-limits
 */
import { ApiError } from "../protocol/errors.ts";

/** A 429 with the seconds after which the client may retry. */
export class RateLimitError extends ApiError {
  readonly retryAfter: number;

  constructor(type: "requests" | "tokens", message: string, retryAfter: number) {
    super(
      429,
      { type, code: "rate_limit_exceeded", message, param: null },
      { "retry-after": String(retryAfter) },
    );
    this.name = "RateLimitError";
    this.retryAfter = retryAfter;
  }
}

/** The limits a request can be refused by. */
export type LimitName =
  | "max_sockets"
  | "sessions_per_key"
  | "turns_per_minute"
  | "request_bytes_per_minute"
  | "tokens_per_day";

const DESCRIPTION: Record<LimitName, [type: "requests" | "tokens", what: string]> = {
  max_sockets: ["requests", "concurrent WebSocket connections"],
  sessions_per_key: ["requests", "concurrent sessions per API key"],
  turns_per_minute: ["requests", "responses per minute (RPM)"],
  request_bytes_per_minute: ["requests", "request bytes per minute"],
  tokens_per_day: ["tokens", "tokens per day (TPD)"],
};

/** The 429 of `limit` (`limit` of them allowed), retryable after `retryAfter` seconds. */
export function limitReached(limit: LimitName, allowed: number, retryAfter: number): RateLimitError {
  const [type, what] = DESCRIPTION[limit];
  return new RateLimitError(
    type,
    `Rate limit reached for this tenant on ${what}: Limit ${allowed}. Please try again in ${retryAfter}s.`,
    retryAfter,
  );
}

/**
 * 503 when a session must ask its tenant's Durable Object before it may admit a turn (it holds no
 * lease that covers it) and cannot reach it: limits fail closed (docs/tenancy.md "Limits under concurrency").
 */
export function limitsUnavailable(): ApiError {
  return new ApiError(
    503,
    {
      type: "server_error",
      code: "tenant_limits_unavailable",
      message: "This tenant's limits cannot be checked right now. Please try again in 1s.",
      param: null,
    },
    { "retry-after": "1" },
  );
}
