/**
 * Retry and fallback across a model's route chain (issue #4 §3). Owns when an upstream failure is
 * retried, how long to wait, and when to move to the next route.
 * - A failure of `open()` (i.e. before the upstream's first event) with status 429 or 5xx — which
 *   includes an unreachable upstream (502) — is retried on the same route up to its `maxRetries`,
 *   waiting `retryBaseMs × 2^attempt` with jitter, or the upstream's `Retry-After` when it sent one.
 * - Then the next route of the chain is tried the same way. A rejected credential
 *   (`upstream_auth_failed`) is not retried but does fall back (the next route has its own key).
 * - Any other failure (a 4xx: the request itself is wrong) is reported at once, no fallback.
 * - A later route that refuses the turn's settings (`Upstream.refusal`: a tool type or parameter
 *   it cannot serve, src/upstream/route-capabilities.ts) is skipped, not tried: the turn was
 *   accepted on the first route's word, and a fallback must neither drop what it asked for nor
 *   fail it with a 400 the client was never given.
 * - When every route failed, the last failure is reported.
 * Invariants: nothing is retried after the first event (a stream that already produced output
 * cannot be replayed without the client seeing it twice); total waiting per turn is bounded by
 * `MAX_TOTAL_WAIT_MS` and a single wait by `MAX_WAIT_MS` (a longer `Retry-After` skips to the next
 * route); an abort (client gone) stops at once.
 * Source: https://platform.openai.com/docs/guides/error-codes (retry 429/5xx with backoff),
 *   https://www.rfc-editor.org/rfc/rfc9110#field.retry-after
 */
import { type Upstream, UpstreamError, type UpstreamRequest, type UpstreamStream } from "./upstream.ts";

/** Longest single wait before a retry, in ms. */
export const MAX_WAIT_MS = 8_000;
/** Longest total waiting across all retries of one turn, in ms. */
const MAX_TOTAL_WAIT_MS = 15_000;

/** One route of a chain, as the fallback logic sees it. */
export interface FallbackRoute {
  /** The route's upstream (model rewrite applied). */
  upstream: Upstream;
  /** Retries after the first attempt on this route. */
  maxRetries: number;
  /** First retry delay in ms. */
  retryBaseMs: number;
  /** The route's context window, in tokens. */
  contextWindow: number;
}

/** What to do after a failed attempt. */
export type FailureAction = "retry" | "next-route" | "report";

/** Classifies a failure of `open()`. */
export function failureAction(cause: unknown): FailureAction {
  if (!(cause instanceof UpstreamError)) return "report";
  if (cause.code === "upstream_auth_failed") return "next-route";
  return cause.status === 429 || cause.status >= 500 ? "retry" : "report";
}

/**
 * The wait before retry number `attempt` (0-based), in ms: the upstream's `Retry-After` when
 * present, else exponential backoff with "equal jitter" (between half and all of
 * `baseMs × 2^attempt`), capped at `MAX_WAIT_MS`.
 * @returns ms, or null when the upstream asked for longer than `MAX_WAIT_MS` (give up this route).
 */
export function retryDelayMs(
  cause: unknown,
  attempt: number,
  baseMs: number,
  random = Math.random,
): number | null {
  const asked = cause instanceof UpstreamError ? cause.retryAfterMs : null;
  if (asked !== null) return asked <= MAX_WAIT_MS ? asked : null;
  const ceiling = Math.min(MAX_WAIT_MS, baseMs * 2 ** attempt);
  return ceiling / 2 + random() * (ceiling / 2);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** An upstream over a route chain: retries, then falls back, before the first event only. */
export class FallbackUpstream implements Upstream {
  private readonly routes: readonly FallbackRoute[];

  /** @param routes the chain, in order (at least one). */
  constructor(routes: readonly FallbackRoute[]) {
    this.routes = routes;
  }

  /** The smallest window of the chain (a fallback route must be able to take the context too). */
  get contextWindow(): number {
    return Math.min(...this.routes.map((route) => route.contextWindow));
  }

  /**
   * Opens the first route that produces a first event.
   * @throws {UpstreamError} the failure to report (see the module rules); the abort reason when
   *   `signal` is aborted.
   */
  async open(request: UpstreamRequest, signal: AbortSignal): Promise<UpstreamStream> {
    // Built only when every route failed: an Error captures a stack, which showed in the runtime's
    // profile when it was built for every turn (issue #27).
    let last: unknown = null;
    let waited = 0;
    for (const [index, route] of this.routes.entries()) {
      if (index > 0 && route.upstream.refusal?.(request.settings)) continue;
      for (let attempt = 0; ; attempt++) {
        try {
          return await route.upstream.open(request, signal);
        } catch (cause) {
          if (signal.aborted) throw cause;
          const action = failureAction(cause);
          if (action === "report") throw cause;
          last = cause;
          if (action === "next-route" || attempt >= route.maxRetries) break;
          const delay = retryDelayMs(cause, attempt, route.retryBaseMs);
          if (delay === null || waited + delay > MAX_TOTAL_WAIT_MS) break;
          waited += delay;
          await sleep(delay, signal);
        }
      }
    }
    throw last ?? new UpstreamError(502, "upstream_unavailable", "No upstream route is configured.");
  }

  /**
   * The first route's refusal (the route a turn normally takes; `Upstream.refusal`); a later route
   * that would refuse is skipped by `open`.
   */
  refusal(settings: Parameters<NonNullable<Upstream["refusal"]>>[0]): UpstreamError | null {
    return this.routes[0]?.upstream.refusal?.(settings) ?? null;
  }

  /** Warms the first route only (a warm-up must not block or fail: `Upstream.prewarm`). */
  prewarm(request: UpstreamRequest): void {
    this.routes[0]?.upstream.prewarm?.(request);
  }

  /** Connects the first route only (`Upstream.preconnect`). */
  preconnect(): Promise<void> {
    return this.routes[0]?.upstream.preconnect?.() ?? Promise.resolve();
  }
}
