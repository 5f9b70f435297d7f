/**
 * Webhook delivery from a session Durable Object (docs/webhooks.md), a lifecycle part
 * (lifecycle.ts) driven by the session's one alarm: it declares its deadline (`nextDeadline`, the
 * outbox's earliest due attempt) and the Durable Object arms the alarm for the earliest of all
 * parts' (alarm-deadline.ts). Owns when an event is made and its deliveries:
 * - `ended`: a background response ended (completed, failed, cancelled, incomplete — the engine's
 *   `finished` hook, or the restart recovery): its event goes into the outbox
 *   (src/store/webhook-outbox.ts) in that same synchronous step, so in the commit of its terminal
 *   state; the session then arms its alarm (due at once);
 * - `onAlarm`: the due events, at most `MAX_PER_ALARM` (a Worker invocation's six simultaneous
 *   outgoing connections), are sent to the tenant's endpoint, read once per alarm
 *   (src/tenancy/tenant-webhook.ts) and checked before any attempt (src/webhooks/webhook-target.ts:
 *   a refused target drops them); each attempt first leases its row (in flight, due again only
 *   after the attempt's timeout and backoff); delivered (2xx) or given up (its last attempt, 72
 *   hours after the event, 410 Gone, no endpoint, a refused target), the row goes; else it is due
 *   again after the backoff (src/webhooks/delivery.ts). Given up is logged; no endpoint is not
 *   (a tenant without one is the usual case). The alarm awaits its attempts, each bounded
 *   by `ATTEMPT_TIMEOUT_MS`, so the next alarm of the other parts waits at most that long;
 * - `onWake`: attempts an earlier instance left in flight (a restart or eviction cut them short)
 *   are due again at once, and an outbox with rows arms the alarm.
 * Invariants: at least once — a row leaves the outbox only when its delivery is settled; one
 * instance never runs two attempts of one event at once (`inFlight`); an attempt carries the
 * Standard Webhooks headers and the event's body, never a key.
 */
import type { ResponseOutcome, ResponseRecord } from "../store/conversation-store.ts";
import type { OutboxRow, WebhookOutbox } from "../store/webhook-outbox.ts";
import {
  ATTEMPT_TIMEOUT_MS,
  type AttemptResult,
  attemptDelivery,
  type DeliveryTarget,
  nextAttemptAt,
  type RetryPolicy,
  retryDelay,
} from "../webhooks/delivery.ts";
import { responseEndedEvent } from "../webhooks/webhook-event.ts";
import { type PrivateTargets, targetRefusal } from "../webhooks/webhook-target.ts";
import type { AlarmRun, SessionPart } from "./lifecycle.ts";

/** Events sent per alarm at most (a Worker invocation's simultaneous outgoing connections). */
export const MAX_PER_ALARM = 6;

/** Collaborators of the deliveries. */
export interface WebhookDeliveriesDeps {
  outbox: WebhookOutbox;
  /** The tenant's endpoint now (null: none); throws when it cannot be read (retried later). */
  target(): Promise<DeliveryTarget | null>;
  /** Private or loopback targets the operator allows (`WEBHOOK_ALLOW_PRIVATE_TARGETS`). */
  privateTargets: PrivateTargets;
  /** The backoff and the attempts at most (`WEBHOOK_RETRY_BASE_MS`, `WEBHOOK_MAX_ATTEMPTS`). */
  retry: RetryPolicy;
  now(): number;
  /** The `fetch` deliveries use. */
  send: typeof fetch;
  /** Arms the session's alarm for the parts' earliest deadline. */
  scheduleAlarm(): void;
  /** Logs an event given up, with its response's id (the session adds its own, redacted). */
  log(where: string, responseId: string, cause: unknown): void;
}

/** The webhook deliveries of one session. */
export class WebhookDeliveries implements SessionPart {
  readonly name = "webhooks";
  private readonly deps: WebhookDeliveriesDeps;
  /** Events an attempt of this instance is sending now. */
  private readonly inFlight = new Set<string>();

  constructor(deps: WebhookDeliveriesDeps) {
    this.deps = deps;
  }

  /**
   * A response ended: a background one's event goes into the outbox (synchronously: the caller's
   * commit). Other responses, and a store:false one whose owner went away (no outcome), send none.
   */
  ended(record: ResponseRecord, outcome: ResponseOutcome | null): void {
    if (!record.background || !outcome) return;
    const event = responseEndedEvent(record.id, outcome.status, outcome.completedAt);
    this.deps.outbox.add({ ...event, responseId: record.id }, this.deps.now());
  }

  /**
   * On wake: attempts an earlier instance left in flight are due now; events it left (or a
   * restart's recovery made) arm the alarm.
   */
  onWake(): void {
    this.deps.outbox.recoverInFlight(this.deps.now());
    if (this.deps.outbox.earliest() !== null) this.deps.scheduleAlarm();
  }

  /** Sends the events due now. Never throws: a failed attempt is rescheduled, not the alarm. */
  async onAlarm({ now }: AlarmRun): Promise<void> {
    const due = this.deps.outbox
      .due(now, MAX_PER_ALARM + this.inFlight.size)
      .filter((row) => !this.inFlight.has(row.deliveryId))
      .slice(0, MAX_PER_ALARM);
    if (due.length === 0) return;
    let target: DeliveryTarget | null;
    try {
      target = await this.deps.target();
    } catch (cause) {
      for (const row of due)
        this.retry(row, row.attempts, {
          kind: "retry",
          status: null,
          afterMs: null,
          error: "endpoint unreadable",
        });
      this.deps.log("webhook endpoint unreadable", due[0]!.responseId, cause);
      return;
    }
    if (target === null) {
      // The tenant has no endpoint (the usual case): nothing to deliver, nothing worth a log line.
      for (const row of due) this.deps.outbox.settle(row.deliveryId);
      return;
    }
    const refusal = targetRefusal(target.url, this.deps.privateTargets);
    if (refusal !== null) {
      for (const row of due) this.giveUp(row, refusal);
      return;
    }
    const endpoint = target;
    await Promise.all(due.map((row) => this.attempt(row, endpoint)));
  }

  /** When the next event is due (ms), or null. */
  nextDeadline(): number | null {
    return this.deps.outbox.earliest();
  }

  /** One attempt of `row`: leased first, then settled or rescheduled by its result. */
  private async attempt(row: OutboxRow, target: DeliveryTarget): Promise<void> {
    const { outbox, now } = this.deps;
    this.inFlight.add(row.deliveryId);
    const attempts = row.attempts + 1;
    // In flight, and not due again before the attempt has surely ended: no alarm of this instance
    // sends it twice; an instance that wakes after a restart makes it again (`onWake`).
    outbox.lease(
      row.deliveryId,
      attempts,
      now() + ATTEMPT_TIMEOUT_MS + retryDelay(attempts, this.deps.retry.baseMs, null),
    );
    let result: AttemptResult;
    try {
      result = await attemptDelivery(this.deps.send, target, row.deliveryId, row.body, now());
    } catch (cause) {
      result = { kind: "retry", status: null, afterMs: null, error: String(cause) };
    } finally {
      this.inFlight.delete(row.deliveryId);
    }
    if (result.kind === "delivered") outbox.settle(row.deliveryId);
    else if (result.kind === "gone") this.giveUp(row, "the endpoint answered 410 Gone");
    else this.retry(row, attempts, result);
  }

  /** After `attempts` failed ones: due again after the backoff, or given up (delivery.ts `nextAttemptAt`). */
  private retry(row: OutboxRow, attempts: number, result: AttemptResult & { kind: "retry" }): void {
    const next = nextAttemptAt(this.deps.retry, attempts, row.createdAt, this.deps.now(), result.afterMs);
    if (next === null) {
      this.giveUp(row, `not delivered after ${attempts} attempts (last: ${result.error})`);
      return;
    }
    this.deps.outbox.failed(row.deliveryId, next, result.status, result.error);
  }

  private giveUp(row: OutboxRow, why: string): void {
    this.deps.outbox.settle(row.deliveryId);
    this.deps.log(`webhook ${row.type} ${row.deliveryId} dropped`, row.responseId, why);
  }
}
