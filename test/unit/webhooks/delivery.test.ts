/**
 * One delivery attempt and its schedule (src/webhooks/delivery.ts), over a stubbed `fetch`: the
 * attempt posts the body as is with the Standard Webhooks headers and nothing that could carry a
 * key, follows no redirect and is bounded by its timeout; 2xx delivers, 410 gives up, anything
 * else retries (with the receiver's `Retry-After`); the backoff grows ×3 to 12 hours, and an event
 * is given up after its last attempt or past 72 hours.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  attemptDelivery,
  DEFAULT_MAX_ATTEMPTS,
  MAX_DELAY_MS,
  nextAttemptAt,
  RETRY_WINDOW_MS,
  retryDelay,
  USER_AGENT,
} from "../../../src/webhooks/delivery.ts";
import { newSigningSecret } from "../../../src/webhooks/standard-webhooks.ts";

const target = { url: "https://hooks.example.com/in", secret: newSigningSecret() };
const BODY =
  '{"id":"evt_1","object":"event","created_at":1,"type":"response.completed","data":{"id":"resp_1"}}';

/** A `fetch` that records its calls and answers `answer()`. */
function stub(answer: () => Promise<Response>) {
  const calls: Array<{ url: string; init: RequestInit }> = [];
  const send = ((url: string, init: RequestInit) => {
    calls.push({ url, init });
    return answer();
  }) as unknown as typeof fetch;
  return { send, calls };
}

describe("attemptDelivery", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("leaves no timer behind once answered (a pending timer would keep the Durable Object in memory)", async () => {
    vi.useFakeTimers();
    const { send } = stub(async () => new Response(null, { status: 200 }));
    expect(await attemptDelivery(send, target, "wh_1", BODY, 0)).toEqual({ kind: "delivered", status: 200 });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("posts the body as is with content-type, user-agent and the three signature headers, nothing else", async () => {
    const { send, calls } = stub(async () => new Response(null, { status: 204 }));
    const result = await attemptDelivery(send, target, "wh_1", BODY, 1_700_000_000_000);
    expect(result).toEqual({ kind: "delivered", status: 204 });
    const [call] = calls;
    expect(call?.url).toBe(target.url);
    expect(call?.init).toMatchObject({ method: "POST", body: BODY, redirect: "manual" });
    expect(call?.init.signal).toBeInstanceOf(AbortSignal);
    const headers = call?.init.headers as Record<string, string>;
    expect(Object.keys(headers).sort()).toEqual([
      "content-type",
      "user-agent",
      "webhook-id",
      "webhook-signature",
      "webhook-timestamp",
    ]);
    expect(headers).toMatchObject({
      "content-type": "application/json",
      "user-agent": USER_AGENT,
      "webhook-id": "wh_1",
      "webhook-timestamp": "1700000000",
    });
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
  });

  it("reads 410 as gone, a redirect or 5xx as a retry with its Retry-After, a network error as a retry", async () => {
    const gone = stub(async () => new Response(null, { status: 410 }));
    expect(await attemptDelivery(gone.send, target, "wh_1", BODY, 0)).toEqual({ kind: "gone", status: 410 });
    const moved = stub(async () => new Response(null, { status: 301, headers: { location: "https://x/" } }));
    expect(await attemptDelivery(moved.send, target, "wh_1", BODY, 0)).toMatchObject({
      kind: "retry",
      status: 301,
    });
    const busy = stub(async () => new Response(null, { status: 503, headers: { "retry-after": "120" } }));
    expect(await attemptDelivery(busy.send, target, "wh_1", BODY, 0)).toEqual({
      kind: "retry",
      status: 503,
      afterMs: 120_000,
      error: "HTTP 503",
    });
    const down = stub(() => Promise.reject(new TypeError("connection refused")));
    expect(await attemptDelivery(down.send, target, "wh_1", BODY, 0)).toEqual({
      kind: "retry",
      status: null,
      afterMs: null,
      error: "network error",
    });
  });

  it("gives up waiting after its timeout: a retry, not a hang", async () => {
    // A receiver that never answers; the attempt's signal ends it.
    const { send } = stub(() => new Promise<Response>(() => {}));
    const hanging = ((url: string, init: RequestInit) =>
      new Promise<Response>((_resolve, reject) => {
        void send(url, init);
        init.signal?.addEventListener("abort", () => reject(init.signal?.reason));
      })) as unknown as typeof fetch;
    expect(await attemptDelivery(hanging, target, "wh_1", BODY, 0, 20)).toEqual({
      kind: "retry",
      status: null,
      afterMs: null,
      error: "timed out",
    });
  });
});

describe("the schedule", () => {
  it("waits base ×3 per attempt, at most 12 hours, jittered ±20 %, never before Retry-After", () => {
    expect([1, 2, 3, 4].map((n) => retryDelay(n, 5_000, null, 0.5))).toEqual([
      5_000, 15_000, 45_000, 135_000,
    ]);
    expect(retryDelay(30, 5_000, null, 0.5)).toBe(MAX_DELAY_MS);
    expect(retryDelay(1, 5_000, null, 0)).toBe(4_000);
    expect(retryDelay(1, 5_000, null, 0.999_999)).toBe(6_000);
    expect(retryDelay(1, 5_000, 60_000, 0.5)).toBe(60_000);
    expect(retryDelay(1, 5_000, 10 * MAX_DELAY_MS, 0.5)).toBe(MAX_DELAY_MS);
  });

  it("gives up after the last attempt, or when the next would fall past 72 hours", () => {
    const policy = { baseMs: 5_000, maxAttempts: 3 };
    expect(nextAttemptAt(policy, 1, 0, 1_000, null, 0.5)).toBe(6_000);
    expect(nextAttemptAt(policy, 2, 0, 1_000, null, 0.5)).toBe(16_000);
    expect(nextAttemptAt(policy, 3, 0, 1_000, null, 0.5)).toBeNull();
    const long = { baseMs: 5_000, maxAttempts: 1000 };
    expect(nextAttemptAt(long, 20, 0, RETRY_WINDOW_MS - MAX_DELAY_MS, null, 0.5)).toBe(RETRY_WINDOW_MS);
    expect(nextAttemptAt(long, 20, 0, RETRY_WINDOW_MS - MAX_DELAY_MS + 1, null, 0.5)).toBeNull();
  });

  it("fits the default attempts in 72 hours with the default backoff (without jitter)", () => {
    const policy = { baseMs: 5_000, maxAttempts: DEFAULT_MAX_ATTEMPTS };
    let now = 0;
    let attempts = 1; // the first attempt, at 0
    for (;;) {
      const next = nextAttemptAt(policy, attempts, 0, now, null, 0.5);
      if (next === null) break;
      now = next;
      attempts += 1;
    }
    expect(attempts).toBe(DEFAULT_MAX_ATTEMPTS);
    expect(now).toBeLessThanOrEqual(RETRY_WINDOW_MS);
  });
});
