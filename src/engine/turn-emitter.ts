/**
 * Event emission and commit of one response. Owns the `sequence_number` counter of a response,
 * the persistence of its event log while it streams, keepalives, and the commit-before-complete
 * rule.
 * Keepalive: while the response is in flight and nothing was sent for `keepaliveMs` (a long
 * prefill or reasoning phase, a slow upstream), `{"type":"keepalive","sequence_number":N}` is sent
 * — the event OpenAI itself sends on long Responses streams, which the `openai` SDK's accumulator
 * ignores — numbered and logged like any event, so a replay stays contiguous. It is a text frame
 * (WebSocket) or an `event: keepalive` (SSE): Codex resets its stream idle timeout on any text
 * frame and ignores unknown event types, and proxies see traffic well within their idle timeouts.
 * A Durable Object's output gate holds every message sent after a storage write until that write
 * is durable ("output gate", https://developers.cloudflare.com/durable-objects/reference/glossary/;
 * https://blog.cloudflare.com/durable-objects-easy-fast-correct-choose-three/). So the log is
 * written after the events were sent, in batches (`LOG_BATCH_EVENTS` events or `LOG_BATCH_MS`
 * after the oldest unwritten one, whichever comes first): an event never waits for its own write,
 * and the stream pays one write per batch, not one per event.
 * Invariants: a store:true response's log holds every event it sent except at most the last batch
 * (what a crash can lose): the write of a batch is issued right after its last event was sent, and
 * every event after it waits in the output gate until that write is durable, so no event numbered
 * more than `LOG_BATCH_EVENTS` past the durable log ever left (recovery.ts numbers a restarted
 * response's terminal event past that bound; lowering the constant would let a new version
 * recover an old version's responses with too small a margin); the terminal event is written (with the rest of the log, the output and
 * the status, in one transaction) before it is sent, so a client never sees a completion that is
 * not durable; store:false responses keep no log, and — unless they continue a conversation, whose
 * append must be durable first (docs/conversations.md) — their terminal event is sent before their
 * output and status are written (in the same synchronous step, so the next turn of the socket
 * finds them): they are connection-scoped state, which a crash loses together with the socket,
 * so they do not wait for a durable commit (issue #8 item 2).
 */
import type { ServerEvent } from "../protocol/server-events.ts";
import type { ConversationStore, ResponseOutcome, ResponseRecord } from "../store/conversation-store.ts";
import type { LiveResponse } from "./live-responses.ts";
import { clientEventFields, responseObject } from "./response-object.ts";

/** Sent events that trigger a write of the event log (the most a crash can lose). */
export const LOG_BATCH_EVENTS = 32;
/** Ms after the oldest unwritten event when the log is written anyway (a slow stream). */
export const LOG_BATCH_MS = 200;

/**
 * Numbers and publishes one response's events (contiguous `sequence_number`s from 0), logs them
 * (store:true) and commits its terminal state.
 */
export class TurnEmitter {
  private seq = 0;
  private readonly live: LiveResponse;
  private readonly store: ConversationStore;
  private readonly record: ResponseRecord;
  /** Sent, not yet written to the log: each event's JSON text, as it was sent. */
  private unlogged: string[] = [];
  private logTimer: ReturnType<typeof setTimeout> | null = null;
  /** False for store:false responses, and once the log outgrew its cap (live-responses.ts). */
  private logging: boolean;
  private readonly keepaliveMs: number;
  private keepaliveTimer: ReturnType<typeof setTimeout> | null = null;
  /** When the last event was sent (ms since the epoch): the silence a keepalive measures. */
  private lastSentAt = 0;

  /** @param keepaliveMs silence before a `keepalive` event, in ms (0 = never). */
  constructor(live: LiveResponse, store: ConversationStore, record: ResponseRecord, keepaliveMs = 0) {
    this.live = live;
    this.store = store;
    this.record = record;
    this.logging = record.store;
    this.keepaliveMs = keepaliveMs;
  }

  /**
   * Publishes the next event (its `sequence_number` is assigned here; its items as the client sees
   * them, src/engine/response-object.ts), then logs it.
   */
  emit(type: string, fields: Record<string, unknown>): void {
    const shown = clientEventFields(fields, this.record.settings.include);
    const event: ServerEvent = { type, sequence_number: this.seq++, ...shown };
    // Serialized once: the same text goes to every sink and, for store:true, to the log.
    const json = JSON.stringify(event);
    this.live.publish(event, json);
    this.log(json);
    this.armKeepalive();
  }

  /** Writes the events sent so far to the log now (e.g. right after `response.created`). */
  flush(): void {
    this.clearLogTimer();
    if (this.unlogged.length === 0) return;
    const batch = this.unlogged;
    this.unlogged = [];
    this.store.appendEventLog(this.record.id, batch);
  }

  /**
   * Commits `outcome` (output, status, the rest of the event log) in one transaction, then
   * publishes the terminal event.
   */
  complete(outcome: ResponseOutcome): void {
    this.close();
    const final: ResponseRecord = {
      ...this.record,
      status: outcome.status,
      usage: outcome.usage,
      error: outcome.error,
      incompleteDetails: outcome.incompleteDetails,
      completedAt: outcome.completedAt,
      moderation: outcome.moderation ?? null,
    };
    // A cancelled response ends with response.failed: the stream protocol has no "cancelled" event.
    const type = outcome.status === "cancelled" ? "failed" : outcome.status;
    const terminal: ServerEvent = {
      type: `response.${type}`,
      sequence_number: this.seq++,
      response: responseObject(final, [...outcome.output]),
    };
    const json = JSON.stringify(terminal);
    // A conversation's turn is written first even when store:false: its append to the conversation
    // (durable state, docs/conversations.md) must be committed before the client reads it ended.
    if (!this.record.store && !this.record.conversationId) {
      // Connection-scoped: sent before the write, so the output gate does not hold it.
      this.live.publish(terminal, json);
      this.store.finish(this.record.id, outcome, null);
      return;
    }
    const tail = this.logging && this.live.events() !== null ? [...this.unlogged, json] : null;
    this.unlogged = [];
    this.store.finish(this.record.id, outcome, tail);
    this.live.publish(terminal, json);
  }

  /** Stops the timers (the turn ended; `complete` calls it). Unwritten events are dropped. */
  close(): void {
    this.clearLogTimer();
    if (this.keepaliveTimer !== null) clearTimeout(this.keepaliveTimer);
    this.keepaliveTimer = null;
  }

  /**
   * Restarts the silence countdown after an event. The timer is not reset on every event (a
   * timer call per event costs more than the event's own relay): it stays armed, and when it
   * fires early — events came meanwhile — it re-arms itself for the rest of the silence.
   */
  private armKeepalive(): void {
    if (this.keepaliveMs <= 0) return;
    this.lastSentAt = Date.now();
    if (this.keepaliveTimer === null) this.scheduleKeepalive(this.keepaliveMs);
  }

  private scheduleKeepalive(delayMs: number): void {
    this.keepaliveTimer = setTimeout(() => {
      this.keepaliveTimer = null;
      const silentFor = Date.now() - this.lastSentAt;
      if (silentFor >= this.keepaliveMs) this.emit("keepalive", {});
      else this.scheduleKeepalive(this.keepaliveMs - silentFor);
    }, delayMs);
  }

  private log(json: string): void {
    if (!this.logging) return;
    if (this.live.events() === null) {
      // Past the log cap the response is not resumable: drop what was written.
      this.logging = false;
      this.clearLogTimer();
      this.unlogged = [];
      this.store.eventLogs.delete([this.record.id]);
      return;
    }
    this.unlogged.push(json);
    if (this.unlogged.length >= LOG_BATCH_EVENTS) this.flush();
    else this.logTimer ??= setTimeout(() => this.flush(), LOG_BATCH_MS);
  }

  private clearLogTimer(): void {
    if (this.logTimer !== null) clearTimeout(this.logTimer);
    this.logTimer = null;
  }
}
