/**
 * The transport-neutral output of the turn engine. A WebSocket lane, an HTTP SSE stream or a
 * plain HTTP request each implement `EventSink`; the engine never knows which one it writes to.
 */
/** A server → client event (brief §3): `type`, `sequence_number` and the event's fields. */
export interface ServerEvent {
  type: string;
  sequence_number: number;
  [field: string]: unknown;
}

/** Receives a response's events in order. `send` must not throw (a gone client is ignored). */
export interface EventSink {
  send(event: ServerEvent): void;
}
