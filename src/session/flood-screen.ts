/**
 * The first look a session takes at a client frame, before any other work on it (before the
 * hibernation handler's failure guard and the lifecycle's frame hook — the store:false purge, the
 * presence mark — and before the frame is parsed). Two refusals, each one pre-rendered frame sent, and nothing else runs for it:
 * - **any frame over its socket's budget** (frame-budget.ts: frames and bytes, token buckets) —
 *   whatever its type, field order, lane, or whether it is JSON at all — is refused with 429
 *   `websocket_rate_limit_exceeded` (no `stream_id`: the frame is not read, so its lane is unknown);
 * - a `response.create` of the default lane that arrives while its connection's queue is full is
 *   refused with the connection's 429 `websocket_queue_full` frame, as the ordinary path would.
 * So each frame of a flood (issues #19, #23: thousands of frames sent at once on one socket), past
 * the budget, costs its sender's session a map lookup, a little arithmetic and a send, and the
 * thread the session shares with others (every Durable Object of a `workerd` process locally, the
 * isolate's neighbours deployed) stays free for them.
 * Every refused frame is answered (one `error` event each, never a silent drop), so a client
 * matching replies to its requests never waits forever; the socket stays open.
 * Invariant: a frame within budget that is not screened out takes the ordinary path
 * (ws-transport.ts, lanes.ts), and the queue-full refusal answers exactly as that path would.
 */
import { errorEvent } from "../protocol/error-rendering.ts";
import { utf8Length } from "../protocol/size-limits.ts";
import type { SecretRedactor } from "../secrets/redactor.ts";
import type { Connection } from "./connection.ts";
import { frameBudgetExceeded } from "./frame-budget.ts";

/**
 * Whether a frame is, by its first bytes, a `response.create` of the default lane: it starts with
 * the `type` member (as every SDK writes it) and names no `stream_id` anywhere. A frame it misses
 * takes the ordinary path; a malformed frame it matches is refused as the create it claims to be.
 */
export function isDefaultLaneCreate(frame: string): boolean {
  return /^\s*\{\s*"type"\s*:\s*"response\.create"/.test(frame) && !frame.includes('"stream_id"');
}

/**
 * Refuses `frame` when `conn` is over its frame budget, or when it is a default-lane create and
 * `conn`'s queue is full; true when it did. Every frame, refused or not, is counted in the budget.
 * @param now the clock, in ms (`Date.now()`).
 */
export function refusedAsFlood(
  conn: Connection,
  frame: string | ArrayBuffer,
  redactor: SecretRedactor,
  now: number = Date.now(),
): boolean {
  const size = () => (typeof frame === "string" ? utf8Length(frame) : frame.byteLength);
  if (!conn.budget.take(size, now)) {
    conn.budgetFrame ??= JSON.stringify(errorEvent(frameBudgetExceeded, redactor, null));
    send(conn, conn.budgetFrame);
    return true;
  }
  if (!conn.lanes.full || typeof frame !== "string" || !isDefaultLaneCreate(frame)) return false;
  conn.queueFullFrame ??= JSON.stringify(errorEvent(conn.lanes.queueFullError, redactor, null));
  send(conn, conn.queueFullFrame);
  return true;
}

function send(conn: Connection, text: string): void {
  try {
    conn.ws.send(text);
  } catch {
    // closed or closing: nothing to deliver to
  }
}
