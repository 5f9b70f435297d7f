/**
 * The first look a session takes at a client frame, before any other work on it (before the
 * hibernation handler's failure guard, the store:false purge and the presence mark): a
 * `response.create` of the default lane that arrives while its connection's queue is full is
 * refused here, with the connection's one pre-rendered 429 `websocket_queue_full` frame, and
 * nothing else runs for it. So each frame of a flood (issue #19: thousands of creates sent at
 * once on one socket) costs its sender's session a map lookup, a prefix test and a send, and the
 * thread the session shares with others (every Durable Object of a `workerd` process locally, the
 * isolate's neighbours deployed) stays free for them.
 * Invariant: a frame screened out is answered exactly as the ordinary path would answer it
 * (ws-transport.ts, lanes.ts); a frame this misses takes the ordinary path.
 */
import { errorEvent } from "../protocol/error-rendering.ts";
import type { SecretRedactor } from "../secrets/redactor.ts";
import type { Connection } from "./connection.ts";

/**
 * Whether a frame is, by its first bytes, a `response.create` of the default lane: it starts with
 * the `type` member (as every SDK writes it) and names no `stream_id` anywhere. A frame it misses
 * takes the ordinary path; a malformed frame it matches is refused as the create it claims to be.
 */
export function isDefaultLaneCreate(frame: string): boolean {
  return /^\s*\{\s*"type"\s*:\s*"response\.create"/.test(frame) && !frame.includes('"stream_id"');
}

/** Refuses `frame` when it is a default-lane create and `conn`'s queue is full; true when it did. */
export function refusedAsFlood(
  conn: Connection,
  frame: string | ArrayBuffer,
  redactor: SecretRedactor,
): boolean {
  if (!conn.lanes.full || typeof frame !== "string" || !isDefaultLaneCreate(frame)) return false;
  conn.queueFullFrame ??= JSON.stringify(errorEvent(conn.lanes.queueFullError, redactor, null));
  try {
    conn.ws.send(conn.queueFullFrame);
  } catch {
    // closed or closing: nothing to deliver to
  }
  return true;
}
