/**
 * The "stream" step of a turn: follows an opened upstream stream, re-keys its output events to
 * Deltagate's ids and emits them, and decides the response's outcome. Owns how upstream events
 * map to client events: the upstream's lifecycle events are dropped (the engine emits its own
 * `response.created` / `response.in_progress`), its terminal event or `error` ends the stream, and
 * a broken stream or an abort becomes `response.failed` / `cancelled`.
 * Invariant: every output event carries Deltagate's item ids (rekey.ts); nothing is emitted after
 * the outcome is known (the terminal event is the commit step's, turn-emitter.ts).
 */
import type { StoredItem } from "../protocol/items.ts";
import { LIFECYCLE_EVENT_TYPES, TERMINAL_EVENT_TYPES } from "../protocol/server-events.ts";
import type { ResponseOutcome } from "../store/conversation-store.ts";
import { UpstreamError, type UpstreamEvent, type UpstreamStream } from "../upstream/upstream.ts";
import { errorOf, failure, terminalOutcome } from "./outcome.ts";
import { OutputRekeyer } from "./rekey.ts";
import type { TurnEmitter } from "./turn-emitter.ts";

/**
 * Streams `opened` to `turn` until its outcome is known.
 * @param signal the turn's abort signal (client gone, `cancel`, abandonment).
 * @returns the outcome to commit, or null when the turn was aborted because its store:false
 *   owner went away (nothing is kept).
 */
export async function streamTurn(
  opened: UpstreamStream,
  turn: TurnEmitter,
  signal: AbortSignal,
  now: () => number,
): Promise<ResponseOutcome | null> {
  const rekey = new OutputRekeyer();
  const output: StoredItem[] = [];
  let outcome: ResponseOutcome | null = null;
  const handle = (event: UpstreamEvent) => {
    if (LIFECYCLE_EVENT_TYPES.has(event.type) || outcome) return;
    if (TERMINAL_EVENT_TYPES.has(event.type)) {
      outcome = terminalOutcome(event, rekey, output, now());
    } else if (event.type === "error") {
      outcome = failure(output, now(), errorOf(event));
    } else {
      const { type, sequence_number: _seq, ...fields } = rekey.event(event);
      if (type === "response.output_item.done" && typeof fields.output_index === "number") {
        output[fields.output_index] = fields.item as StoredItem;
      }
      turn.emit(String(type), fields);
    }
  };
  try {
    handle(opened.first);
    for await (const event of outcome ? [] : opened.rest) {
      handle(event);
      if (outcome || signal.aborted) break;
    }
  } catch (cause) {
    if (!signal.aborted) {
      const message = cause instanceof UpstreamError ? cause.message : "The upstream stream failed.";
      const code = cause instanceof UpstreamError ? cause.code : "server_error";
      outcome = failure(output, now(), { code, message });
    }
  }
  if (signal.aborted) {
    const reason: unknown = signal.reason;
    if (reason !== "cancelled" && reason !== "abandoned") return null; // store:false owner gone
    return {
      ...failure(output, now(), { code: "response_cancelled", message: `The response was ${reason}.` }),
      status: "cancelled",
    };
  }
  return (
    outcome ??
    failure(output, now(), {
      code: "server_error",
      message: "The upstream stream ended before the response completed.",
    })
  );
}
