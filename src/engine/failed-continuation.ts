/**
 * OpenAI's rule for connection-local store:false state after a failed continuation: "if a
 * same-lane continuation fails with a 4xx or 5xx, the referenced previous_response_id is evicted
 * from the connection cache; a failed cross-lane fork keeps the shared parent" (WebSocket mode
 * guide), so the client's retry gets `previous_response_not_found` and resends its full context
 * instead of building again on state the failure may have left stale. Owns when a failed turn
 * evicts its parent.
 * A parent is evicted when the turn that continued it failed (a request-level error after the
 * parent was resolved, or `response.failed`) and: it is store:false; the continuation ran on the
 * lane the parent was created on (the same `stream_id`, or both on the default lane); and no other
 * response builds on it (a fork is a shared parent, and a chain built on it must keep its
 * history). A turn aborted because its socket went away evicts nothing: the socket's close decides
 * what happens to its state (src/session/scope.ts). Nor does a request refused before its parent
 * is looked at (a malformed frame, an unsupported parameter, an oversized setting), nor a parent
 * that is not found or still in progress.
 * Source: https://developers.openai.com/api/docs/guides/websocket-mode
 */
import type { CreateRequest } from "../protocol/create-request.ts";
import type { ConversationStore, ResponseRecord } from "../store/conversation-store.ts";

/** The settings key under which a response remembers the lane it was created on. */
export const LANE_SETTING = "stream_id";

/** The lane of a request: its `stream_id`, null for the default lane. */
export function laneOf(request: CreateRequest): string | null {
  return request.stream_id || null;
}

/**
 * After a failed turn: evicts its parent when the rule above says so.
 * @param failedId the failed response, when one was created (it builds on the parent too).
 * @returns true when the parent was evicted.
 */
export function evictAfterFailure(
  store: ConversationStore,
  parent: ResponseRecord | null,
  request: CreateRequest,
  failedId: string | null,
): boolean {
  if (!parent || parent.store || parent.connId === null) return false;
  const parentLane = parent.settings[LANE_SETTING];
  if ((typeof parentLane === "string" ? parentLane : null) !== laneOf(request)) return false;
  if (store.hasChildOtherThan(parent.id, failedId)) return false;
  return store.delete(parent.id);
}
