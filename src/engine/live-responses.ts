/**
 * Responses in progress in this session Durable Object: their event log and their subscribers.
 * Owns resumption and abandonment:
 * - every event of a live response is appended to its log (bounded by `MAX_LOG_BYTES`) and sent
 *   to every subscriber; a subscriber joining with `startingAfter = N` first receives the logged
 *   events with `sequence_number > N`, then the live ones, with no gap and no duplicate (both
 *   happen synchronously, so no event can slip in between);
 * - a store:true response keeps generating while no client listens; after `graceMs` with no
 *   subscriber it is cancelled (the upstream request is aborted and the response is stored as
 *   `cancelled`) — unless it is a background response, which is never abandoned
 *   (docs/background.md);
 * - `cancel()` ends a response early (HTTP `POST /v1/responses/{id}/cancel`);
 * - a finished response is replayed from its persisted log (`loggedEventsAfter`); `replay` is the
 *   one resumption both transports use (WebSocket `deltagate.response.resume`, HTTP `GET` with
 *   `stream`): the live response when it runs here, else the persisted log.
 * Invariant: a response is in the registry exactly while its turn runs.
 */
import { eventLogUnavailable } from "../protocol/errors.ts";
import { endsStream, type ServerEvent } from "../protocol/server-events.ts";
import type { EventSink } from "./event-sink.ts";

/**
 * The events of a finished response's persisted log to send a client resuming after
 * `startingAfter`: those with a larger `sequence_number`. A client that already has the terminal
 * event (`startingAfter` equal to its number) gets nothing more; one that asks past it gets the
 * terminal event again, so its stream still ends whatever number it names. (A client that was
 * streaming when the session restarted may have been sent events the log never got;
 * src/engine/recovery.ts numbers the terminal event past any number it can hold.)
 */
export function loggedEventsAfter(log: readonly ServerEvent[], startingAfter: number): ServerEvent[] {
  const events = log.filter((event) => event.sequence_number > startingAfter);
  const last = log.at(-1);
  if (last && endsStream(last.type) && last.sequence_number < startingAfter) events.push(last);
  return events;
}

/** Largest event log kept per response, in bytes of JSON; past it the response is not resumable. */
const MAX_LOG_BYTES = 8 * 1024 * 1024;
/** Default grace period before an abandoned store:true response is cancelled, in ms (10 minutes). */
const DEFAULT_ABANDON_GRACE_MS = 10 * 60 * 1000;

/** Why a live response's signal was aborted. */
export type CancelReason = "cancelled" | "abandoned";

/** A response being generated now. */
export class LiveResponse {
  readonly id: string;
  private readonly log: ServerEvent[] = [];
  private logBytes = 0;
  private overflowed = false;
  private readonly subscribers = new Set<EventSink>();
  private readonly controller = new AbortController();
  private graceTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly graceMs: number;
  private readonly abandonable: boolean;

  constructor(id: string, graceMs: number, abandonable: boolean) {
    this.id = id;
    this.graceMs = graceMs;
    this.abandonable = abandonable;
  }

  /** Aborted by `cancel()` or abandonment; `reason` is a `CancelReason`. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The events so far, when the whole log is still held (null once it outgrew `MAX_LOG_BYTES`). */
  events(): readonly ServerEvent[] | null {
    return this.overflowed ? null : this.log;
  }

  /**
   * Appends an event to the log and delivers it to every subscriber.
   * @param json `JSON.stringify(event)` (serialized here when not given): the one serialization of
   *   the event, which sizes the log and which every sink writes.
   */
  publish(event: ServerEvent, json: string = JSON.stringify(event)): void {
    if (!this.overflowed) {
      this.logBytes += json.length;
      if (this.logBytes > MAX_LOG_BYTES) {
        this.overflowed = true;
        this.log.length = 0;
      } else {
        this.log.push(event);
      }
    }
    for (const sink of this.subscribers) sink.send(event, json);
  }

  /**
   * Adds a subscriber: replays logged events after `startingAfter` (-1 = all), then streams live.
   * @returns false when the log overflowed and the replay cannot be complete (nothing is sent).
   */
  subscribe(sink: EventSink, startingAfter: number): boolean {
    if (this.overflowed && startingAfter >= 0) return false;
    for (const event of this.log) if (event.sequence_number > startingAfter) sink.send(event);
    this.subscribers.add(sink);
    this.clearGrace();
    return true;
  }

  /** Whether `sink` receives this response's events. */
  serves(sink: EventSink): boolean {
    return this.subscribers.has(sink);
  }

  /** Removes a subscriber; the last one leaving starts the abandonment grace period. */
  detach(sink: EventSink): void {
    if (!this.subscribers.delete(sink) || this.subscribers.size > 0 || !this.abandonable) return;
    this.clearGrace();
    this.graceTimer = setTimeout(() => this.cancel("abandoned"), this.graceMs);
  }

  /** Aborts the response's upstream work; the engine stores it as `cancelled`. */
  cancel(reason: CancelReason): void {
    this.clearGrace();
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }

  /** Stops timers (the turn ended). */
  close(): void {
    this.clearGrace();
    this.subscribers.clear();
  }

  private clearGrace(): void {
    if (this.graceTimer !== null) clearTimeout(this.graceTimer);
    this.graceTimer = null;
  }
}

/** The live responses of one session Durable Object. */
export class LiveRegistry {
  private readonly live = new Map<string, LiveResponse>();
  private readonly graceMs: number;

  constructor(graceMs = DEFAULT_ABANDON_GRACE_MS) {
    this.graceMs = graceMs;
  }

  /**
   * Registers a starting response with its first subscriber (the client that created it).
   * @param abandonable true for store:true responses (they outlive their client for `graceMs`);
   *   false for store:false ones (the transport aborts them) and background ones (never abandoned).
   */
  begin(id: string, creator: EventSink, abandonable: boolean): LiveResponse {
    const response = new LiveResponse(id, this.graceMs, abandonable);
    response.subscribe(creator, -1);
    this.live.set(id, response);
    return response;
  }

  /** Unregisters a finished response. */
  end(id: string): void {
    this.live.get(id)?.close();
    this.live.delete(id);
  }

  /** How many responses are running in this instance. */
  get size(): number {
    return this.live.size;
  }

  /** The live response with this id, if it is running in this instance. */
  get(id: string): LiveResponse | undefined {
    return this.live.get(id);
  }

  /**
   * Sends `sink` the events of response `id` after `startingAfter` (-1 = all): when it runs here,
   * the logged ones and then the live ones as they come; else those of its persisted log (`log`,
   * read only then). The caller has checked that the response is visible to its client.
   * @returns the live response `sink` now follows (detach it when the client goes away), or null
   *   when the whole stream was sent from the persisted log.
   * @throws {ApiError} 409 `event_log_unavailable` when the events cannot be sent complete (the
   *   live log overflowed, or no log was persisted: store:false, or it outgrew its limit).
   */
  replay(
    id: string,
    startingAfter: number,
    sink: EventSink,
    log: () => readonly ServerEvent[] | null,
  ): LiveResponse | null {
    const live = this.live.get(id);
    if (live) {
      if (!live.subscribe(sink, startingAfter)) throw eventLogUnavailable(id);
      return live;
    }
    const events = log();
    if (!events) throw eventLogUnavailable(id);
    for (const event of loggedEventsAfter(events, startingAfter)) sink.send(event);
    return null;
  }

  /** The ids of the live responses any of `sinks` receives (for log lines). */
  idsServing(sinks: Iterable<EventSink>): string[] {
    const all = [...sinks];
    return [...this.live.values()].filter((r) => all.some((sink) => r.serves(sink))).map((r) => r.id);
  }

  /** Detaches a sink from every live response (its client went away). */
  detachEverywhere(sink: EventSink): void {
    for (const response of this.live.values()) response.detach(sink);
  }
}
