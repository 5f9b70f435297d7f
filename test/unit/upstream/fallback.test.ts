/**
 * Retry policy pieces of src/upstream/fallback.ts and retry-after.ts: which failures are retried
 * or fall back, the backoff bounds, and `Retry-After` / `retry-after-ms` parsing.
 */
import { describe, expect, it } from "vitest";
import { failureAction, MAX_WAIT_MS, retryDelayMs } from "../../../src/upstream/fallback.ts";
import { retryAfterMs } from "../../../src/upstream/retry-after.ts";
import { UpstreamError } from "../../../src/upstream/upstream.ts";

describe("retry policy", () => {
  it("retries 429 and 5xx, falls back on rejected credentials, reports other failures", () => {
    expect(failureAction(new UpstreamError(429, "rate_limit_exceeded", "slow down"))).toBe("retry");
    expect(failureAction(new UpstreamError(503, "server_error", "busy"))).toBe("retry");
    expect(failureAction(new UpstreamError(502, "upstream_unavailable", "unreachable"))).toBe("retry");
    expect(failureAction(new UpstreamError(502, "upstream_auth_failed", "bad key"))).toBe("next-route");
    expect(failureAction(new UpstreamError(400, "invalid_request_error", "bad"))).toBe("report");
    expect(failureAction(new TypeError("bug"))).toBe("report");
  });

  it("backs off exponentially with jitter, honours Retry-After, gives up on a long one", () => {
    const plain = new UpstreamError(503, "server_error", "busy");
    expect(retryDelayMs(plain, 0, 100, () => 0)).toBe(50);
    expect(retryDelayMs(plain, 0, 100, () => 1)).toBe(100);
    expect(retryDelayMs(plain, 3, 100, () => 1)).toBe(800);
    expect(retryDelayMs(plain, 20, 100, () => 1)).toBe(MAX_WAIT_MS);
    const asked = new UpstreamError(429, "rate_limit_exceeded", "slow", "rate_limit_error", 1234);
    expect(retryDelayMs(asked, 0, 100)).toBe(1234);
    const tooLong = new UpstreamError(
      429,
      "rate_limit_exceeded",
      "slow",
      "rate_limit_error",
      MAX_WAIT_MS + 1,
    );
    expect(retryDelayMs(tooLong, 0, 100)).toBeNull();
  });

  it("parses retry-after-ms first, then Retry-After seconds or HTTP-date", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterMs(new Headers({ "retry-after-ms": "250", "retry-after": "9" }), now)).toBe(250);
    expect(retryAfterMs(new Headers({ "retry-after": "2" }), now)).toBe(2000);
    expect(retryAfterMs(new Headers({ "retry-after": "1.5" }), now)).toBe(1500);
    expect(retryAfterMs(new Headers({ "retry-after": "Thu, 01 Jan 2026 00:00:03 GMT" }), now)).toBe(3000);
    expect(retryAfterMs(new Headers({ "retry-after": "Wed, 31 Dec 2025 00:00:00 GMT" }), now)).toBe(0);
    expect(retryAfterMs(new Headers({ "retry-after": "soon" }), now)).toBeNull();
    expect(retryAfterMs(new Headers(), now)).toBeNull();
  });
});
