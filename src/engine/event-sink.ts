/**
 * The transport-neutral output port of the turn engine. A WebSocket lane, an HTTP SSE stream or a
 * plain HTTP request each implement `EventSink`; the engine never knows which one it writes to.
 */
import type { ServerEvent } from "../protocol/server-events.ts";

/**
 * Receives a response's events in order. `send` must not throw (a gone client is ignored).
 * `json`, when given, is `JSON.stringify(event)`, made once per event by whoever published it
 * (live-responses.ts), so a sink that writes text reuses it instead of serializing again.
 */
export interface EventSink {
  send(event: ServerEvent, json?: string): void;
}
