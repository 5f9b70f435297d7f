/**
 * The one way to decorate an `Upstream` (the stages of src/pipeline/, context fitting and usage
 * in src/context/, safety checks, a route's model rewrite): the decorator gives what it changes —
 * its `open`, or a rewrite of the request — and everything else of the `Upstream` contract is
 * forwarded to `inner` here.
 * Invariant: a decorated upstream forwards every optional member of `Upstream` (`contextWindow`,
 * `refusal`, `prewarm`, `preconnect`, `dispose`); a member added to `Upstream` does not compile here until it is
 * forwarded, so no decorator can forget one. A request rewrite reaches `open` and `prewarm` alike.
 */
import type { Upstream, UpstreamRequest, UpstreamStream } from "./upstream.ts";

/** What a decorator changes. */
export interface Decoration {
  /**
   * How the request changes on its way to `inner` (applied before `open` and `prewarm`);
   * unchanged when absent.
   */
  request?(request: UpstreamRequest): UpstreamRequest;
  /**
   * The decorator's `open`, given the (rewritten) request; `inner.open` when absent.
   * Keep the `Upstream` contract: reject with `UpstreamError` before the first event, throw it
   * from the stream after, and forward the inner stream's optional `usage`.
   */
  open?(request: UpstreamRequest, signal: AbortSignal): Promise<UpstreamStream>;
}

/** Every member of `Upstream` a decorator forwards (all but `open`), required. */
type Forwarded = Required<Omit<Upstream, "open">>;

/** `inner` decorated by `decoration`; every other member of `Upstream` forwarded. */
export function decorateUpstream(inner: Upstream, decoration: Decoration): Upstream {
  const rewrite = decoration.request;
  const open = decoration.open ?? ((request, signal) => inner.open(request, signal));
  const decorated: Forwarded & Pick<Upstream, "open"> = {
    get contextWindow() {
      return inner.contextWindow;
    },
    open: rewrite ? (request, signal) => open(rewrite(request), signal) : open,
    refusal: (settings) => inner.refusal?.(settings) ?? null,
    prewarm: (request) => inner.prewarm?.(rewrite ? rewrite(request) : request),
    preconnect: () => inner.preconnect?.() ?? Promise.resolve(),
    dispose: () => inner.dispose?.(),
  };
  return decorated;
}
