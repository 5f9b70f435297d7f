/**
 * Retry policy pieces of src/upstream/fallback.ts and retry-after.ts: which failures are retried
 * or fall back, the backoff bounds, `Retry-After` / `retry-after-ms` parsing, and the fallback
 * past a route that would refuse the turn.
 */
import { describe, expect, it } from "vitest";
import {
  FallbackUpstream,
  failureAction,
  MAX_WAIT_MS,
  retryDelayMs,
} from "../../../src/upstream/fallback.ts";
import { retryAfterMs } from "../../../src/upstream/retry-after.ts";
import { capabilityRefusal } from "../../../src/upstream/route-capabilities.ts";
import {
  type Upstream,
  UpstreamError,
  type UpstreamRequest,
  type UpstreamStream,
} from "../../../src/upstream/upstream.ts";

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

describe("fallback past a route that cannot serve the turn", () => {
  const request: UpstreamRequest = {
    model: "m",
    input: [],
    newInput: [],
    previousResponseId: null,
    responseId: "resp_1",
    settings: { tools: [{ type: "web_search" }] },
    sessionKey: "s",
  };
  const stream: UpstreamStream = { first: { type: "response.created" }, rest: (async function* () {})() };

  /** A route that records its attempts: down (503), or serving; refusing as Chat Completions when asked. */
  function route(name: string, up: boolean, attempts: string[], chat = false) {
    const upstream: Upstream = {
      open: () => {
        attempts.push(name);
        return up ? Promise.resolve(stream) : Promise.reject(new UpstreamError(503, "server_error", "busy"));
      },
      ...(chat ? { refusal: (settings) => capabilityRefusal("chat-completions", settings) } : {}),
    };
    return { upstream, maxRetries: 0, retryBaseMs: 1, contextWindow: 1000 };
  }

  it("skips a later route that would refuse the turn's settings, and reports the last real failure", async () => {
    const attempts: string[] = [];
    const chain = new FallbackUpstream([
      route("responses", false, attempts),
      route("chat", true, attempts, true),
      route("other", true, attempts),
    ]);
    expect(chain.refusal(request.settings)).toBeNull();
    await expect(chain.open(request, new AbortController().signal)).resolves.toBe(stream);
    expect(attempts).toEqual(["responses", "other"]);

    const alone: string[] = [];
    const short = new FallbackUpstream([route("responses", false, alone), route("chat", true, alone, true)]);
    await expect(short.open(request, new AbortController().signal)).rejects.toMatchObject({ status: 503 });
    expect(alone).toEqual(["responses"]);
  });

  it("tries a later route when the turn asks for nothing it refuses", async () => {
    const attempts: string[] = [];
    const chain = new FallbackUpstream([
      route("responses", false, attempts),
      route("chat", true, attempts, true),
    ]);
    const plain = { ...request, settings: {} };
    await expect(chain.open(plain, new AbortController().signal)).resolves.toBe(stream);
    expect(attempts).toEqual(["responses", "chat"]);
  });
});
