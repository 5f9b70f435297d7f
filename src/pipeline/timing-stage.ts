/**
 * The timing stage: measures the upstream part of a turn on the turn's `TurnTimer`
 * (turn-timer.ts). Innermost of the stages (it wraps the route chain directly), so it times the
 * upstream alone:
 * - `stages`: the outer stages' work in `open()` (context fitting), up to this stage;
 * - `upstream_connect`: from `open()` to the adapter's connection being ready (`onConnected`;
 *   retries and their backoff included; absent when the adapter does not say);
 * - `upstream_first_event`: from then to the upstream's first event;
 * - `generation`: from the first event to the last one the turn read (wall time);
 * - `relay`: Deltagate's own time per upstream event (the outer stages, re-keying, emitting and
 *   sending it), summed: the time between handing an event on and being asked for the next.
 * A sampled turn's `deltagate.upstream_first_event` span (turn-trace.ts) covers `open()` to the
 * first event (connection included).
 * It also records what went upstream (`upstream_input_items`, `upstream_request_bytes`: the
 * adapter's `onSent`) on the timer's facts.
 * Invariant: it changes nothing it forwards (request, events, errors) except adding the request's
 * `onConnected` and `onSent` listeners.
 */
import { TERMINAL_EVENT_TYPES } from "../protocol/server-events.ts";
import { decorateUpstream } from "../upstream/decorate.ts";
import type {
  Upstream,
  UpstreamEvent,
  UpstreamRequest,
  UpstreamSent,
  UpstreamStream,
} from "../upstream/upstream.ts";
import type { TurnStage } from "./stage.ts";
import type { TurnTimer } from "./turn-timer.ts";

/** The timing stage (list it first: innermost). */
export function timingStage(): TurnStage {
  return { name: "timing", wrap: (inner, turn) => timed(inner, turn.timer) };
}

function timed(inner: Upstream, timer: TurnTimer): Upstream {
  return decorateUpstream(inner, {
    async open(request: UpstreamRequest, signal: AbortSignal): Promise<UpstreamStream> {
      timer.lap("stages");
      const openedAt = timer.clock();
      let connectedAt: number | null = null;
      const onConnected = () => {
        connectedAt = timer.clock();
        request.onConnected?.();
      };
      const onSent = (sent: UpstreamSent) => {
        timer.note({ upstream_input_items: sent.items, upstream_request_bytes: sent.bytes });
        request.onSent?.(sent);
      };
      // A sampled turn's `deltagate.upstream_first_event` span: from `open()` to the first event.
      const span = timer.trace?.start("upstream_first_event");
      let stream: UpstreamStream;
      try {
        stream = await inner.open({ ...request, onConnected, onSent }, signal);
      } finally {
        span?.end();
      }
      const firstAt = timer.clock();
      const connected = connectedAt ?? openedAt;
      if (connectedAt !== null) timer.add("upstream_connect", connectedAt - openedAt);
      timer.add("upstream_first_event", firstAt - connected);
      timer.skip();
      // Optional members of the inner stream (the usage counter) pass through.
      return { ...stream, rest: timedRest(stream.rest, timer, firstAt) };
    },
  });
}

/** `rest`, charging the consumer's time per event to `relay` and the stream's span to `generation`. */
async function* timedRest(
  rest: AsyncIterable<UpstreamEvent>,
  timer: TurnTimer,
  firstAt: number,
): AsyncGenerator<UpstreamEvent> {
  // Until the first `next()`: the engine handled the first event and stored the response.
  timer.add("relay", timer.clock() - firstAt);
  let lastAt = firstAt;
  let handedOn: number | null = null;
  let generated = false;
  const generation = () => {
    if (generated) return;
    generated = true;
    timer.add("generation", lastAt - firstAt);
  };
  try {
    for await (const event of rest) {
      lastAt = timer.clock();
      handedOn = lastAt;
      // The engine stops reading at the terminal event (it may never resume this generator), so
      // generation ends here, not in `finally`.
      if (TERMINAL_EVENT_TYPES.has(event.type)) generation();
      yield event;
      timer.add("relay", timer.clock() - lastAt);
      handedOn = null;
    }
  } finally {
    // The consumer stopped at an event (the terminal one): its handling is relay too.
    if (handedOn !== null) timer.add("relay", timer.clock() - handedOn);
    generation();
    timer.skip();
  }
}
