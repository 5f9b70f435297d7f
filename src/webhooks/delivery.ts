/**
 * One delivery attempt of a webhook event, and when to try again. Owns the attempt — a `POST` of
 * the event's body to the endpoint with `content-type`, `user-agent` and the Standard Webhooks
 * headers (standard-webhooks.ts) and nothing else: no `authorization`, no key of any kind;
 * redirects are not followed (a `3xx` is a failure, as the spec says); the answer's body is not
 * read — and its reading: a `2xx` delivered it, `410 Gone` means the receiver wants no more (the
 * event is dropped), anything else, a timeout or a network error is retried. Owns the schedule:
 * exponential backoff from `baseMs` (×3 per attempt, at most `MAX_DELAY_MS`, ±20 % jitter so
 * failed deliveries do not come back in step), later when the answer asked for it (`Retry-After`),
 * for at most `maxAttempts` attempts (`WEBHOOK_MAX_ATTEMPTS`, default `DEFAULT_MAX_ATTEMPTS`) and
 * never later than `RETRY_WINDOW_MS` after the event — OpenAI's 72 hours.
 * Sources: https://developers.openai.com/api/docs/guides/webhooks ("retried with exponential
 *   backoff for up to 72 hours"), https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
 *   (delivery success and failure, retry schedule with jitter, request timeouts of 15–30 s)
 */
import { retryAfterMs } from "../upstream/retry-after.ts";
import { signatureHeaders } from "./standard-webhooks.ts";

/** How long an event is retried after it was made, in ms: 72 hours, as OpenAI. */
export const RETRY_WINDOW_MS = 72 * 60 * 60 * 1000;
/** The longest wait between two attempts, in ms (12 hours). */
export const MAX_DELAY_MS = 12 * 60 * 60 * 1000;
/** How long an attempt waits for the receiver's answer, in ms (the spec's 15–30 s). */
export const ATTEMPT_TIMEOUT_MS = 15_000;
/**
 * Attempts of one event at most, by default: 14, the attempts the default schedule (5 s ×3 per
 * attempt, at most 12 hours apart) fits in 72 hours — 5 s, 20 s, 65 s, … 13.7 h, then every 12 h
 * up to 61.7 h.
 */
export const DEFAULT_MAX_ATTEMPTS = 14;
/** The `user-agent` of every attempt. */
export const USER_AGENT = "Deltagate-Webhooks/1.0";

/** Where an event goes: the tenant's endpoint and its signing secret. */
export interface DeliveryTarget {
  url: string;
  secret: string;
}

/** What one attempt came to. */
export type AttemptResult =
  | { kind: "delivered"; status: number }
  /** The receiver answered `410 Gone`: no more attempts. */
  | { kind: "gone"; status: number }
  /** Try again; `status` null when no answer came (timeout, network); `afterMs` its `Retry-After`. */
  | { kind: "retry"; status: number | null; afterMs: number | null; error: string };

/**
 * Sends `body` to `target` once, signed for now.
 * @param send the `fetch` to use.
 */
export async function attemptDelivery(
  send: typeof fetch,
  target: DeliveryTarget,
  deliveryId: string,
  body: string,
  now: number,
  timeoutMs = ATTEMPT_TIMEOUT_MS,
): Promise<AttemptResult> {
  const signed = await signatureHeaders(target.secret, deliveryId, Math.floor(now / 1000), body);
  // The timeout's timer is cleared once the answer came: a pending timer keeps a Durable Object in
  // memory (docs/background.md "Where it runs"), so `AbortSignal.timeout` would hold the session
  // for the whole timeout after every delivery.
  const timeout = new AbortController();
  const timer = setTimeout(
    () => timeout.abort(new DOMException("webhook attempt timed out", "TimeoutError")),
    timeoutMs,
  );
  let answer: Response;
  try {
    answer = await send(target.url, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": USER_AGENT, ...signed },
      body,
      redirect: "manual",
      signal: timeout.signal,
    });
  } catch (cause) {
    const timedOut = timeout.signal.aborted || (cause instanceof Error && cause.name === "TimeoutError");
    return { kind: "retry", status: null, afterMs: null, error: timedOut ? "timed out" : "network error" };
  } finally {
    clearTimeout(timer);
  }
  await answer.body?.cancel().catch(() => {});
  if (answer.status >= 200 && answer.status < 300) return { kind: "delivered", status: answer.status };
  if (answer.status === 410) return { kind: "gone", status: answer.status };
  return {
    kind: "retry",
    status: answer.status,
    afterMs: retryAfterMs(answer.headers, now),
    error: `HTTP ${answer.status}`,
  };
}

/**
 * When the attempt after `attempts` failed ones should go, in ms from now: `baseMs`·3^(attempts−1),
 * at most `MAX_DELAY_MS`, jittered by ±20 %, and no sooner than the receiver's `Retry-After`.
 * @param random a number in [0, 1) (tests pass a constant).
 */
export function retryDelay(
  attempts: number,
  baseMs: number,
  afterMs: number | null,
  random = Math.random(),
): number {
  const backoff = Math.min(baseMs * 3 ** Math.max(0, attempts - 1), MAX_DELAY_MS);
  const jittered = Math.round(backoff * (0.8 + 0.4 * random));
  return Math.max(jittered, Math.min(afterMs ?? 0, MAX_DELAY_MS));
}

/** How the retries of one event go (`Config.webhooks`). */
export interface RetryPolicy {
  /** First wait in ms (`WEBHOOK_RETRY_BASE_MS`). */
  baseMs: number;
  /** Attempts at most (`WEBHOOK_MAX_ATTEMPTS`). */
  maxAttempts: number;
}

/**
 * When the next attempt of an event made at `createdAt` goes, after `attempts` failed ones, or
 * null when it is given up: `maxAttempts` made, or the next would fall past the 72-hour window.
 * @param afterMs the receiver's `Retry-After`, in ms from `now` (null: none).
 */
export function nextAttemptAt(
  policy: RetryPolicy,
  attempts: number,
  createdAt: number,
  now: number,
  afterMs: number | null,
  random = Math.random(),
): number | null {
  if (attempts >= policy.maxAttempts) return null;
  const at = now + retryDelay(Math.max(1, attempts), policy.baseMs, afterMs, random);
  return at > createdAt + RETRY_WINDOW_MS ? null : at;
}
