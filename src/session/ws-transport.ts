/**
 * The WebSocket transport of a session: turns client frames into engine calls and engine events
 * into frames (brief §1.5, §2, §3). Owns the per-frame contract:
 * - every frame is parsed and validated; a bad frame gets an `error` event with `status` and the
 *   socket stays open (nothing is stored for it);
 * - `response.create` goes to its lane; every event of a named lane carries its `stream_id`;
 * - `response.steer` is answered with `response.steer.failed` / `steering_not_supported`.
 */
import type { EventSink, ServerEvent } from "../engine/event-sink.ts";
import type { TurnEngine } from "../engine/turn-engine.ts";
import { parseClientFrame } from "../protocol/client-events.ts";
import type { CreateRequest } from "../protocol/create-request.ts";
import { ApiError, connectionLimitReached, internalError } from "../protocol/errors.ts";
import { attachmentOf, type Connection } from "./connection.ts";

const NEVER_ABORTED = new AbortController().signal;

/** Builds the request-level `error` event (brief §1.5 shape 1). */
export function errorEvent(error: ApiError, streamId?: string | null): Record<string, unknown> {
  return {
    type: "error",
    status: error.status,
    ...(streamId ? { stream_id: streamId } : {}),
    error: error.toBody(),
  };
}

/** Sends one JSON frame; a socket that is already gone is ignored (the turn goes on without it). */
export function sendFrame(ws: WebSocket, frame: unknown): void {
  try {
    ws.send(JSON.stringify(frame));
  } catch {
    // closed or closing: nothing to deliver to
  }
}

/** The sink of one lane: stamps `stream_id` on named lanes. */
function laneSink(ws: WebSocket, streamId: string | null | undefined): EventSink {
  return {
    send(event: ServerEvent) {
      sendFrame(ws, streamId ? { ...event, stream_id: streamId } : event);
    },
  };
}

/** Best-effort `stream_id` of a frame that failed validation, so the error reaches its lane. */
function streamIdOf(frame: string | ArrayBuffer): string | null {
  if (typeof frame !== "string") return null;
  try {
    const value: unknown = JSON.parse(frame);
    if (typeof value === "object" && value !== null && "stream_id" in value) {
      const id = (value as { stream_id: unknown }).stream_id;
      return typeof id === "string" && id.length > 0 ? id : null;
    }
  } catch {
    // not JSON
  }
  return null;
}

/** Frame handling for all sockets of one session. */
export class WebSocketTransport {
  private readonly engine: TurnEngine;
  private readonly maxConnectionMs: number;
  private readonly now: () => number;

  constructor(engine: TurnEngine, maxConnectionMs: number, now: () => number) {
    this.engine = engine;
    this.maxConnectionMs = maxConnectionMs;
    this.now = now;
  }

  /**
   * Handles one frame. Returns once the frame is dispatched; a `response.create` runs in its lane
   * and the returned promise of that run is handed to `track` (e.g. `ctx.waitUntil`).
   */
  onMessage(conn: Connection, frame: string | ArrayBuffer, track: (p: Promise<unknown>) => void): void {
    if (this.expired(conn)) {
      this.closeForLifetime(conn);
      return;
    }
    let event: ReturnType<typeof parseClientFrame>;
    try {
      event = parseClientFrame(frame);
    } catch (error) {
      const apiError = error instanceof ApiError ? error : internalError();
      sendFrame(conn.ws, errorEvent(apiError, streamIdOf(frame)));
      return;
    }
    switch (event.type) {
      case "response.create":
        this.create(conn, event.request, track);
        return;
      case "response.steer":
        sendFrame(conn.ws, {
          type: "response.steer.failed",
          sequence_number: 0,
          steer: { previous_response_id: event.previous_response_id },
          error: {
            type: "invalid_request_error",
            code: "steering_not_supported",
            message: "Steering is not supported by this model or server.",
            param: null,
          },
        });
        return;
      case "response.processed":
        return; // Codex acknowledgement: nothing to do
    }
  }

  private create(conn: Connection, request: CreateRequest, track: (p: Promise<unknown>) => void): void {
    const streamId = request.stream_id;
    const rejected = conn.lanes.admit(streamId);
    if (rejected) {
      sendFrame(conn.ws, errorEvent(rejected, streamId));
      return;
    }
    conn.lanes.enqueue(streamId, () => {
      const run = this.engine
        .run(
          request,
          { connId: conn.attachment.connId },
          laneSink(conn.ws, streamId),
          this.signalFor(conn, request),
        )
        .catch((error: unknown) => {
          if (conn.closed.signal.aborted) return;
          if (!(error instanceof ApiError)) console.error("turn failed", error);
          sendFrame(conn.ws, errorEvent(error instanceof ApiError ? error : internalError(), streamId));
        });
      track(run);
      return run;
    });
  }

  /**
   * The abort signal of a turn. A store:false turn dies with its socket (nobody can ever read it);
   * a store:true turn keeps running when its client goes away, so its output is stored and the
   * chain can be continued from another connection.
   */
  private signalFor(conn: Connection, request: CreateRequest): AbortSignal {
    return request.store === false ? conn.closed.signal : NEVER_ABORTED;
  }

  /** True when the connection outlived `maxConnectionMs`. */
  expired(conn: Connection): boolean {
    // Read the attachment afresh: it is the durable record of when the socket was accepted.
    const openedAt = attachmentOf(conn.ws)?.openedAt ?? conn.attachment.openedAt;
    return this.now() - openedAt >= this.maxConnectionMs;
  }

  /** Sends `websocket_connection_limit_reached` and closes the socket (1000). */
  closeForLifetime(conn: Connection): void {
    const minutes = Math.round(this.maxConnectionMs / 60_000);
    sendFrame(conn.ws, errorEvent(connectionLimitReached(minutes)));
    try {
      conn.ws.close(1000, "connection lifetime limit reached");
    } catch {
      // already closing
    }
  }
}
