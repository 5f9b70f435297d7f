/**
 * The WebSocket transport of a session: turns client frames into engine calls and engine events
 * into frames (https://developers.openai.com/api/docs/guides/websocket-mode). Owns the per-frame contract:
 * - every frame within its socket's budget (flood-screen.ts runs first: a frame over it is
 *   refused unread) is parsed and validated; a bad frame gets an `error` event with `status` and the
 *   socket stays open (nothing is stored for it); a frame over `MAX_REQUEST_BYTES` is refused
 *   (413 `request_too_large`) before it is parsed;
 * - `response.create`s queue per connection up to the lane scheduler's caps (lanes.ts), beyond
 *   which they get 429 `websocket_queue_full` (a default-lane create already in flood-screen.ts,
 *   before this runs), and pass the session's one admission (admission.ts: the client secret's
 *   binding and turn count, the tenant's models and limits — 429 `rate_limit_exceeded`); a
 *   verdict that must wait (the session's lease does not cover it: it asks its tenant) holds the
 *   create's place on its lane, so a lane's creates run in the order they came;
 * - an admitted create that never runs (its socket closed first) gives back what it reserved, and
 *   so does a turn that ends without its usage booked (admission.ts `release`);
 * - `response.create` goes to its lane; every event of a named lane carries its `stream_id`;
 * - `response.create` with `background` is refused (400 `unsupported_parameter`, before the lanes
 *   and the admission: WebSocket mode does not use it, src/protocol/background.ts);
 * - `response.steer` is answered with `response.steer.failed` / `steering_not_supported`;
 * - on a socket opened with a client secret, a `response.create` outside its binding (another
 *   session's `previous_response_id`, a model or size it does not allow, no turn left) gets an
 *   `error` event and nothing is stored (admission.ts);
 * - a `response.create` naming a conversation another session of the tenant holds, on a socket
 *   opened with a tenant key, is relayed in its lane's order to that session, which admits and
 *   runs it (conversation-relay.ts): it is not admitted here;
 * - a turn's scope carries the key the socket was opened with (the usage ledger's key);
 * - a create whose invocation is sampled runs in its turn's span (src/pipeline/turn-trace.ts),
 *   admission included, ended after its terminal event or where it ends without running.
 */
import type { EventSink } from "../engine/event-sink.ts";
import type { LiveRegistry } from "../engine/live-responses.ts";
import type { TurnEngine } from "../engine/turn-engine.ts";
import { TurnTimer } from "../pipeline/turn-timer.ts";
import { logTurn, timingFrames } from "../pipeline/turn-timing.ts";
import { genAiProvider, sampled, type Tracer, traceRefused, traceTurn } from "../pipeline/turn-trace.ts";
import { backgroundOverWebSocket } from "../protocol/background.ts";
import { parseClientFrame, RESUME_EVENT } from "../protocol/client-events.ts";
import type { CreateRequest } from "../protocol/create-request.ts";
import { asApiError, errorEvent } from "../protocol/error-rendering.ts";
import { ApiError, connectionLimitReached, responseNotFound } from "../protocol/errors.ts";
import { isRecord } from "../protocol/json.ts";
import { parseClientJson } from "../protocol/json-limits.ts";
import type { ServerEvent } from "../protocol/server-events.ts";
import { MAX_REQUEST_BYTES, requestTooLarge, utf8Length } from "../protocol/size-limits.ts";
import type { SecretRedactor } from "../secrets/redactor.ts";
import type { ConversationStore } from "../store/conversation-store.ts";
import { type AdmissionVerdict, type Admitted, whenSettled } from "./admission.ts";
import { attachmentOf, type Connection } from "./connection.ts";
import type { ConversationRelay, RelayTarget } from "./conversation-relay.ts";
import { type FailureIds, failureLabel } from "./failure-log.ts";
import { maySee, type VisibilitySettings } from "./visibility.ts";

const NEVER_ABORTED = new AbortController().signal;

/** Sends one JSON frame; a socket that is already gone is ignored (the turn goes on without it). */
function sendFrame(ws: WebSocket, frame: unknown): void {
  sendText(ws, JSON.stringify(frame));
}

/** Sends one text frame; a socket that is already gone is ignored. */
function sendText(ws: WebSocket, text: string): void {
  try {
    ws.send(text);
  } catch {
    // closed or closing: nothing to deliver to
  }
}

/**
 * The frame of `event` on the lane of `streamId`: its JSON text (`json`, the one serialization
 * made when it was published, when given) with `"stream_id"` appended on a named lane — the
 * same text as serializing `{ ...event, stream_id }`, without serializing the event again.
 */
export function laneFrame(event: ServerEvent, json: string | undefined, streamId: string | null): string {
  if (!streamId) return json ?? JSON.stringify(event);
  // An event that already has a `stream_id` field (an upstream's) gets it replaced, as the spread does.
  if (json === undefined || "stream_id" in event) return JSON.stringify({ ...event, stream_id: streamId });
  return `${json.slice(0, -1)},"stream_id":${JSON.stringify(streamId)}}`;
}

/** The sink of one lane of a connection (one per lane): stamps `stream_id` on named lanes. */
function laneSink(conn: Connection, streamId: string | null | undefined): EventSink {
  const key = streamId ?? "";
  let sink = conn.sinks.get(key);
  if (!sink) {
    const lane = streamId || null;
    sink = {
      send(event: ServerEvent, json?: string) {
        sendText(conn.ws, laneFrame(event, json, lane));
      },
    };
    conn.sinks.set(key, sink);
  }
  return sink;
}

/** Best-effort `stream_id` of a frame that failed validation, so the error reaches its lane. */
function streamIdOf(frame: string | ArrayBuffer): string | null {
  if (typeof frame !== "string") return null;
  try {
    const value = parseClientJson(frame, "frame");
    if (isRecord(value)) {
      const id = value.stream_id;
      return typeof id === "string" && id.length > 0 ? id : null;
    }
  } catch {
    // not JSON
  }
  return null;
}

/** Collaborators of the WebSocket transport. */
export interface WebSocketTransportDeps {
  engine: TurnEngine;
  store: ConversationStore;
  live: LiveRegistry;
  /** Connection lifetime in ms (60 minutes by default, as OpenAI). */
  maxConnectionMs: number;
  /** The environment's secrets, redacted from every `error` event (src/secrets/redactor.ts). */
  redactor: SecretRedactor;
  /** The one visibility rule's settings (visibility.ts), for resumption. */
  visibility: VisibilitySettings;
  /**
   * The session Durable Object's id (hex): named by failure log lines (failure-log.ts), and a
   * client secret's socket continues only its responses.
   */
  objectId: string;
  now(): number;
  /** Write one log line per turn (`TURN_LOG`, src/pipeline/turn-timing.ts). */
  turnLog: boolean;
  /**
   * The session's one admission (admission.ts) of a create the connection has room for: its
   * scope, or the error to send (the socket stays open) — now when the session's lease covers it,
   * else once the tenant answered.
   */
  admit(
    conn: Connection,
    request: CreateRequest,
    bytes: number,
  ): AdmissionVerdict | Promise<AdmissionVerdict>;
  /**
   * Relays a create of a conversation another session of the tenant holds to that session
   * (conversation-relay.ts); absent: every create runs here.
   */
  relay?: ConversationRelay;
  /** The runtime's tracer (src/pipeline/turn-trace.ts), null where it has none: a sampled turn's spans. */
  tracer?: Tracer | null;
  /** A model's `gen_ai.provider.name` (turn-trace.ts `genAiProvider` of its route), on a sampled turn's span. */
  providerOf?(model: string): string;
}

/** Frame handling for all sockets of one session. */
export class WebSocketTransport {
  private readonly engine: TurnEngine;
  private readonly store: ConversationStore;
  private readonly live: LiveRegistry;
  private readonly maxConnectionMs: number;
  private readonly redactor: SecretRedactor;
  private readonly visibility: VisibilitySettings;
  private readonly objectId: string;
  private readonly now: () => number;
  private readonly turnLog: boolean;
  private readonly admit: WebSocketTransportDeps["admit"];
  private readonly tracer: Tracer | null;
  private readonly providerOf: (model: string) => string;
  private readonly relay: ConversationRelay | null;

  constructor(deps: WebSocketTransportDeps) {
    this.admit = deps.admit;
    this.relay = deps.relay ?? null;
    this.tracer = deps.tracer ?? null;
    this.providerOf = deps.providerOf ?? (() => genAiProvider(null));
    this.engine = deps.engine;
    this.store = deps.store;
    this.live = deps.live;
    this.maxConnectionMs = deps.maxConnectionMs;
    this.redactor = deps.redactor;
    this.visibility = deps.visibility;
    this.objectId = deps.objectId;
    this.now = deps.now;
    this.turnLog = deps.turnLog;
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
    const timer = new TurnTimer();
    // Measured before parsing, so an oversized frame costs no parse (src/protocol/size-limits.ts).
    const bytes = typeof frame === "string" ? utf8Length(frame) : frame.byteLength;
    if (bytes > MAX_REQUEST_BYTES) {
      this.sendError(conn, requestTooLarge(), null);
      return;
    }
    let event: ReturnType<typeof parseClientFrame>;
    try {
      event = parseClientFrame(frame);
    } catch (error) {
      const where = failureLabel("frame rejected", this.idsOf(conn), this.redactor);
      this.sendError(conn, asApiError(error, where, this.redactor), streamIdOf(frame));
      return;
    }
    switch (event.type) {
      case "response.create":
        timer.lap("parse");
        if (conn.lastDoneAt !== null) timer.add("think", timer.clock() - conn.lastDoneAt);
        this.create(conn, event.request, bytes, track, timer);
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
      case RESUME_EVENT:
        this.resume(conn, event.response_id, event.starting_after, event.stream_id);
        return;
    }
  }

  /** The ids a failure log line of `conn` names (failure-log.ts). */
  private idsOf(conn: Connection, responseIds: readonly (string | null | undefined)[] = []): FailureIds {
    return { session: this.objectId, sessionName: conn.attachment.sessionId, responseIds };
  }

  /**
   * `deltagate.response.resume`: replays the events of `responseId` after `startingAfter` on the
   * lane of `streamId`, then (if it is still running) streams the rest live. Visible: what the one
   * visibility rule lets this socket `resume` (visibility.ts: store:true responses of this session
   * within retention, store:false ones of this socket).
   */
  private resume(conn: Connection, responseId: string, startingAfter: number, streamId: string | null): void {
    const sink = laneSink(conn, streamId);
    const record = this.store.get(responseId);
    if (!record || !maySee(record, conn.attachment.connId, "resume", this.now(), this.visibility)) {
      this.sendError(conn, responseNotFound(responseId), streamId);
      return;
    }
    try {
      this.live.replay(responseId, startingAfter, sink, () => this.store.eventLogs.read(responseId));
    } catch (error) {
      const where = failureLabel("resume failed", this.idsOf(conn, [responseId]), this.redactor);
      this.sendError(conn, asApiError(error, where, this.redactor), streamId);
    }
  }

  private create(
    conn: Connection,
    request: CreateRequest,
    bytes: number,
    track: (p: Promise<unknown>) => void,
    timer: TurnTimer,
  ): void {
    if (request.background) {
      // WebSocket mode does not use `background` (src/protocol/background.ts): nothing is counted.
      this.sendError(conn, backgroundOverWebSocket(), request.stream_id);
      return;
    }
    // A conversation another session holds: its turn runs there (conversation-relay.ts).
    const target = this.relay?.targetOf(conn, request) ?? null;
    if (this.relay && target) {
      this.queueRelay(this.relay, conn, target, request, bytes, track);
      return;
    }
    if (!sampled(this.tracer)) {
      this.admitAndQueue(conn, request, bytes, track, timer);
      return;
    }
    // A sampled turn runs in its span (src/pipeline/turn-trace.ts), ended by `reportTiming` (or
    // where the create ends without running).
    const turn = {
      transport: "websocket",
      session: this.objectId,
      model: request.model,
      provider: this.providerOf,
      store: request.store ?? true,
      stream: true,
    } as const;
    traceTurn(this.tracer, turn, (trace) => {
      timer.trace = trace;
      this.admitAndQueue(conn, request, bytes, track, timer);
    });
  }

  /** Room on the lane and the one admission (a sampled turn's `admission` span), then its lane. */
  private admitAndQueue(
    conn: Connection,
    request: CreateRequest,
    bytes: number,
    track: (p: Promise<unknown>) => void,
    timer: TurnTimer,
  ): void {
    const streamId = request.stream_id;
    const admission = timer.trace?.start("admission");
    // Room on the connection first (nothing counted for a create it cannot queue), then the one
    // admission: the secret's binding and turns, the tenant's models and limits.
    const full = conn.lanes.admit(streamId, bytes);
    if (full) {
      admission?.end();
      this.sendError(conn, full, streamId);
      traceRefused(timer, full.code ?? full.type);
      return;
    }
    const verdict = whenSettled(this.admit(conn, request, bytes), (settled) => {
      admission?.end();
      if (settled instanceof ApiError) {
        if (!conn.closed.signal.aborted) this.sendError(conn, settled, streamId);
        traceRefused(timer, settled.code ?? settled.type);
        return null;
      }
      return settled;
    });
    if (verdict === null) return;
    // Warm: queued now. Cold: the create holds its place on its lane until its verdict is in.
    conn.lanes.enqueue(
      streamId,
      () =>
        Promise.resolve(
          whenSettled(verdict, (admitted) => admitted && this.run(conn, request, admitted, track, timer)),
        ),
      bytes,
    );
  }

  /**
   * A create of a conversation another session holds: room on its lane first, then relayed in its
   * lane's order (conversation-relay.ts). Not admitted here: the session that runs it admits and
   * meters it, once, under the socket's key; it also traces and logs it.
   */
  private queueRelay(
    relay: ConversationRelay,
    conn: Connection,
    target: RelayTarget,
    request: CreateRequest,
    bytes: number,
    track: (p: Promise<unknown>) => void,
  ): void {
    const streamId = request.stream_id;
    const full = conn.lanes.admit(streamId, bytes);
    if (full) {
      this.sendError(conn, full, streamId);
      return;
    }
    conn.lanes.enqueue(
      streamId,
      () => {
        // Still queued when its socket closed: never started, nothing asked of the other session.
        if (conn.closed.signal.aborted) return Promise.resolve();
        const sink = laneSink(conn, streamId);
        const run = relay.run(conn, target, request, bytes, sink, conn.closed.signal).then(
          () => {
            conn.lastDoneAt = performance.now(); // the clock connection.ts documents
          },
          (error: unknown) => {
            const where = failureLabel("relayed turn failed", this.idsOf(conn), this.redactor);
            if (!conn.closed.signal.aborted)
              this.sendError(conn, asApiError(error, where, this.redactor), streamId);
          },
        );
        track(run);
        return run;
      },
      bytes,
    );
  }

  /** Runs an admitted create on its lane (`request.model`: the admitted model, aliases resolved). */
  private run(
    conn: Connection,
    request: CreateRequest,
    admitted: Admitted,
    track: (p: Promise<unknown>) => void,
    timer: TurnTimer,
  ): Promise<unknown> {
    // A create still queued when its socket closed was never started (no response.created):
    // drop it rather than generate a response nobody asked to keep waiting for.
    if (conn.closed.signal.aborted) {
      admitted.release();
      traceRefused(timer, "client_gone");
      return Promise.resolve();
    }
    if (admitted.model !== null) request.model = admitted.model;
    timer.trace?.admitted(request.model);
    const streamId = request.stream_id;
    timer.lap("queue");
    const run = this.engine
      .run(
        request,
        {
          connId: conn.attachment.connId,
          tenant: conn.attachment.tenant,
          keepalive: conn.attachment.keepalive !== false,
          keyId: admitted.keyId,
          ...(admitted.reservation ? { reservation: admitted.reservation } : {}),
        },
        laneSink(conn, streamId),
        this.signalFor(conn, request),
        timer,
      )
      .then(
        ({ responseId }) => this.reportTiming(conn, request, timer, responseId, null),
        (error: unknown) => {
          const ids = this.idsOf(conn, [request.previous_response_id]);
          const apiError = asApiError(error, failureLabel("turn failed", ids, this.redactor), this.redactor);
          if (!conn.closed.signal.aborted) this.sendError(conn, apiError, streamId);
          this.reportTiming(conn, request, timer, null, apiError.code ?? apiError.type);
        },
      )
      .finally(() => admitted.release()); // a turn that ended unbooked (a booked one settled it)
    track(run);
    return run;
  }

  /**
   * After a turn: its timing frames to a socket that asked for them (after the terminal event),
   * its log line, and the start of the client's think time.
   */
  private reportTiming(
    conn: Connection,
    request: CreateRequest,
    timer: TurnTimer,
    responseId: string | null,
    error: string | null,
  ): void {
    timer.end();
    const stages = timer.stages();
    timer.trace?.finish(stages, timer.facts(), error);
    conn.lastDoneAt = timer.clock();
    const optIn = attachmentOf(conn.ws)?.timing ?? conn.attachment.timing;
    if (optIn && responseId && !conn.closed.signal.aborted) {
      for (const frame of timingFrames(optIn, responseId, stages, request.stream_id, timer.facts()))
        sendFrame(conn.ws, frame);
    }
    if (this.turnLog) {
      logTurn({
        transport: "websocket",
        responseId,
        model: request.model,
        store: request.store ?? true,
        error,
        stages,
        facts: timer.facts(),
      });
    }
  }

  /**
   * The abort signal of a turn. A store:false turn dies with its socket (nobody can ever read it);
   * a store:true turn keeps running when its client goes away, so its output is stored and the
   * chain can be continued from another connection.
   */
  private signalFor(conn: Connection, request: CreateRequest): AbortSignal {
    return request.store === false ? conn.closed.signal : NEVER_ABORTED;
  }

  /** Sends a request-level `error` event (redacted by the one renderer) on the lane of `streamId`. */
  private sendError(conn: Connection, error: ApiError, streamId: string | null | undefined): void {
    sendFrame(conn.ws, errorEvent(error, this.redactor, streamId));
  }

  /**
   * True when the connection outlived `maxConnectionMs`.
   * @param durable read the socket's attachment (the durable record of when it was accepted, which
   *   the alarm checks) rather than its in-memory copy (the same value, read on every frame
   *   without deserializing the attachment).
   */
  expired(conn: Connection, durable = false): boolean {
    const openedAt = (durable ? attachmentOf(conn.ws)?.openedAt : undefined) ?? conn.attachment.openedAt;
    return this.now() - openedAt >= this.maxConnectionMs;
  }

  /** Sends `websocket_connection_limit_reached` and closes the socket (1000). */
  closeForLifetime(conn: Connection): void {
    const minutes = Math.round(this.maxConnectionMs / 60_000);
    this.sendError(conn, connectionLimitReached(minutes), null);
    try {
      conn.ws.close(1000, "connection lifetime limit reached");
    } catch {
      // already closing
    }
  }
}
