/**
 * Server → client events of the Responses streaming protocol, shared by SSE and WebSocket mode:
 * their shape (and reading one back from a stream's text) and the event-type vocabulary every
 * module classifies them by. Owns the lifecycle and terminal event-type sets (the one
 * definition; adapters, the engine and the transports all read these).
 * Invariant: a response's stream is `response.created`, `response.in_progress`, output events, then
 * exactly one terminal event; a request-level `error` ends a stream that never started.
 * Source: https://platform.openai.com/docs/api-reference/responses-streaming,
 *   https://developers.openai.com/api/docs/guides/websocket-mode
 */

import { isRecord } from "./json.ts";

/** A server → client event: `type`, `sequence_number` and the event's fields. */
export interface ServerEvent {
  type: string;
  sequence_number: number;
  [field: string]: unknown;
}

/**
 * The event a stream's `data` line carries, or null when it is not one (not JSON, no string
 * `type`, no numeric `sequence_number`): for reading a stream Deltagate itself rendered (a
 * conversation's turn relayed from another session, src/session/conversation-relay.ts).
 */
export function parseServerEvent(data: string): ServerEvent | null {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return null;
  }
  if (!isRecord(value) || typeof value.type !== "string" || typeof value.sequence_number !== "number")
    return null;
  return { ...value, type: value.type, sequence_number: value.sequence_number };
}

/** Events that announce a response before any output (carry only the Response object). */
export const LIFECYCLE_EVENT_TYPES: ReadonlySet<string> = new Set([
  "response.created",
  "response.in_progress",
  "response.queued",
]);

/** The terminal events of a response (a cancelled response ends with `response.failed`). */
export const TERMINAL_EVENT_TYPES: ReadonlySet<string> = new Set([
  "response.completed",
  "response.incomplete",
  "response.failed",
]);

/** Terminal events whose response is a finished chain node (it can be continued and has a usage). */
export const FINISHED_EVENT_TYPES: ReadonlySet<string> = new Set([
  "response.completed",
  "response.incomplete",
]);

/** The request-level error event (WebSocket `error` frame; a stream `error` event). */
const ERROR_EVENT_TYPE = "error";

/** True when nothing follows an event of this type in its stream: a terminal event or `error`. */
export function endsStream(type: string): boolean {
  return TERMINAL_EVENT_TYPES.has(type) || type === ERROR_EVENT_TYPE;
}
