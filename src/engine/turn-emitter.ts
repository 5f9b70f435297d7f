/**
 * Event emission and commit of one response. Owns the `sequence_number` counter of a response and
 * the commit-before-complete rule (the output gate:
 * https://developers.cloudflare.com/durable-objects/api/storage-api/).
 */
import type { ServerEvent } from "../protocol/server-events.ts";
import type { ConversationStore, ResponseOutcome, ResponseRecord } from "../store/conversation-store.ts";
import type { LiveResponse } from "./live-responses.ts";
import { clientEventFields, responseObject } from "./response-object.ts";

/**
 * Numbers and publishes one response's events (contiguous `sequence_number`s from 0) and commits
 * its terminal state: the terminal event is built first, the output, status and full event log
 * are written in one transaction, and only then is the terminal event sent (so a client never sees
 * a completion that is not durable).
 */
export class TurnEmitter {
  private seq = 0;
  private readonly live: LiveResponse;
  private readonly store: ConversationStore;
  private readonly record: ResponseRecord;

  constructor(live: LiveResponse, store: ConversationStore, record: ResponseRecord) {
    this.live = live;
    this.store = store;
    this.record = record;
  }

  /** Publishes the next event (its `sequence_number` is assigned here; its item as the client sees it). */
  emit(type: string, fields: Record<string, unknown>): void {
    const shown = clientEventFields(fields, this.record.settings.include);
    this.live.publish({ type, sequence_number: this.seq++, ...shown });
  }

  /** Commits `outcome` (output, status, event log) in one transaction, then publishes the terminal event. */
  complete(outcome: ResponseOutcome): void {
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
    const log = this.record.store ? this.live.events() : null;
    this.store.finish(this.record.id, outcome, log ? [...log, terminal] : null);
    this.live.publish(terminal);
  }
}
