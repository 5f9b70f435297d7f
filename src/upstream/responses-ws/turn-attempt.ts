/**
 * One attempt at a turn on one upstream socket: send the `response.create` frame, then follow the
 * upstream's events until the response ends. Owns the boundary between "recoverable" and
 * "client-visible": until the first event that carries output (anything but `response.created`
 * / `response.in_progress` / `response.queued`, which are held back), a state loss or a closed
 * socket is reported as `resend` and nothing has reached the engine; from that event on, the
 * events are forwarded and a drop is a mid-stream `UpstreamError`.
 * Invariants: the socket's listener is detached when the attempt ends; `finished` resolves
 * exactly once, when the upstream is done with this response (terminal event, error, close or
 * abort), which is when the socket may carry the next turn; a response that completes is
 * remembered on the socket (Deltagate id → upstream id) so the next turn can go delta-only.
 */
import { endsStream, FINISHED_EVENT_TYPES, LIFECYCLE_EVENT_TYPES } from "../../protocol/server-events.ts";
import { UpstreamError, type UpstreamEvent, type UpstreamStream } from "../upstream.ts";
import { classifyErrorFrame } from "./error-frames.ts";
import { EventChannel } from "./event-channel.ts";
import type { SocketClose, SocketListener, UpstreamSocket } from "./upstream-socket.ts";

/** How an attempt ended before (or when) its response started. */
export type AttemptOutcome =
  /** The response started; `finished` resolves when the upstream is done with it. */
  | { kind: "opened"; stream: UpstreamStream; finished: Promise<void> }
  /** Upstream state was lost before anything was forwarded: resend the full context. */
  | { kind: "resend"; freshSocket: boolean; error: UpstreamError }
  /** A failure before the response started, to report as is. */
  | { kind: "fail"; error: UpstreamError };

/** What the attempt sends. */
export interface AttemptFrame {
  /** The `response.create` frame. */
  frame: Record<string, unknown>;
  /** Deltagate's id for this response (remembered against the upstream's id). */
  responseId: string;
  /** Items of the context the upstream will hold for this request (history + input as sent). */
  contextItems: number;
  /** Called with the frame's JSON text as it is sent (the per-turn report measures it). */
  onSend?: (text: string) => void;
}

/**
 * Runs one attempt.
 * @param signal aborting closes the socket (the only way to stop an upstream WebSocket response)
 *   and rejects (before the first event) or fails the stream (after) with `signal.reason`.
 */
export function runAttempt(
  socket: UpstreamSocket,
  sent: AttemptFrame,
  signal: AbortSignal,
): Promise<AttemptOutcome> {
  return new Promise<AttemptOutcome>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const held: UpstreamEvent[] = [];
    let channel: EventChannel<UpstreamEvent> | null = null;
    let upstreamId: string | null = null;
    let finish: () => void = () => {};
    const finished = new Promise<void>((settle) => {
      finish = settle;
    });
    const onAbort = () => socket.close("turn cancelled");
    const detach = () => {
      signal.removeEventListener("abort", onAbort);
      socket.listen(null);
    };

    const listener: SocketListener = {
      frame(event) {
        upstreamId = responseIdOf(event) ?? upstreamId;
        if (!channel) {
          if (event.type === "error") {
            detach();
            socket.forget();
            const verdict = classifyErrorFrame(event);
            resolve(
              verdict.kind === "resend"
                ? { kind: "resend", freshSocket: verdict.freshSocket, error: lostBeforeStart() }
                : verdict,
            );
            return;
          }
          // Lifecycle events carry no output: held back so a drop right after stays recoverable.
          if (LIFECYCLE_EVENT_TYPES.has(event.type)) {
            held.push(event);
            return;
          }
          channel = new EventChannel<UpstreamEvent>();
          const [first, ...rest] = [...held, event];
          for (const early of rest) channel.push(early);
          resolve({ kind: "opened", stream: { first: first ?? event, rest: channel }, finished });
        } else {
          channel.push(event);
        }
        if (!endsStream(event.type)) return;
        detach();
        const outputItems = outputCountOf(event);
        // A finished response is a chain node the upstream keeps on this socket.
        if (FINISHED_EVENT_TYPES.has(event.type) && upstreamId !== null && outputItems !== null) {
          socket.remember(sent.responseId, { upstreamId, items: sent.contextItems + outputItems });
        } else {
          socket.forget();
        }
        channel.end();
        finish();
      },
      closed(close) {
        detach();
        if (!channel) {
          if (signal.aborted) reject(signal.reason);
          else if (close.invalidFrame) resolve({ kind: "fail", error: invalidFrame() });
          else resolve({ kind: "resend", freshSocket: true, error: lostBeforeStart() });
          return;
        }
        channel.fail(signal.aborted ? signal.reason : lostMidStream(close));
        finish();
      },
    };
    socket.listen(listener);
    signal.addEventListener("abort", onAbort, { once: true });
    // A failed send marks the socket gone, which reaches `listener.closed` → `resend`.
    const text = JSON.stringify(sent.frame);
    sent.onSend?.(text);
    socket.send(text);
  });
}

/** Items in a terminal event's `response.output`, or null when it has none. */
function outputCountOf(event: UpstreamEvent): number | null {
  const response = event.response;
  if (typeof response !== "object" || response === null || Array.isArray(response)) return null;
  const output = (response as Record<string, unknown>).output;
  return Array.isArray(output) ? output.length : null;
}

function responseIdOf(event: UpstreamEvent): string | null {
  const response = event.response;
  if (typeof response !== "object" || response === null || Array.isArray(response)) return null;
  const id = (response as Record<string, unknown>).id;
  return typeof id === "string" ? id : null;
}

function lostBeforeStart(): UpstreamError {
  return new UpstreamError(
    502,
    "upstream_unavailable",
    "The upstream connection kept closing before the response started.",
  );
}

function invalidFrame(): UpstreamError {
  return new UpstreamError(502, "upstream_error", "The upstream sent an event that is not JSON.");
}

function lostMidStream(close: SocketClose): UpstreamError {
  return close.invalidFrame
    ? invalidFrame()
    : new UpstreamError(502, "upstream_error", "The upstream connection was lost mid-stream.");
}
