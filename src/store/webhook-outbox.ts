/**
 * The webhook outbox of a session Durable Object: the events of its background responses that
 * ended and are not delivered yet (migrations/0012_webhook_outbox.sql). Owns every query of that
 * table and the no-loss rule: a row is added in the same synchronous step as its response's
 * terminal state (the engine's `finished` hook, or the restart recovery: so in the same storage
 * commit), and deleted only when its delivery is settled (delivered, or given up); an attempt
 * first marks its row in flight and moves its `next_at` past the attempt's longest end (`lease`),
 * so no alarm of this instance sends it twice, and an instance that wakes makes every attempt a
 * restart or eviction cut short again at once (`recoverInFlight`) — at least once, never lost.
 * The earliest `next_at` is kept in memory, so the session's alarm deadline costs no query.
 * Source: https://developers.cloudflare.com/durable-objects/api/sqlite-storage-api/
 */

/** One event waiting for delivery. */
export interface OutboxRow {
  /** `wh_…`: the `webhook-id` of every attempt (src/webhooks/webhook-event.ts). */
  deliveryId: string;
  responseId: string;
  type: string;
  /** The exact JSON text every attempt sends. */
  body: string;
  /** When the event was made (ms): its retries end 72 hours later. */
  createdAt: number;
  /** Attempts made so far. */
  attempts: number;
  nextAt: number;
}

interface Row extends Record<string, SqlStorageValue> {
  delivery_id: string;
  response_id: string;
  type: string;
  body: string;
  created_at: number;
  attempts: number;
  next_at: number;
}

/** The webhook outbox of one session. */
export class WebhookOutbox {
  private readonly sql: SqlStorage;
  /** The earliest `next_at` of any row (null: none). */
  private earliestAt: number | null;

  /** The table exists: the session's migrations ran first (conversation-store.ts). */
  constructor(sql: SqlStorage) {
    this.sql = sql;
    this.earliestAt = this.readEarliest();
  }

  /** Adds an event, due at once. */
  add(event: { deliveryId: string; responseId: string; type: string; body: string }, at: number): void {
    this.sql.exec(
      "INSERT INTO webhook_outbox (delivery_id, response_id, type, body, created_at, next_at) VALUES (?, ?, ?, ?, ?, ?)",
      event.deliveryId,
      event.responseId,
      event.type,
      event.body,
      at,
      at,
    );
    if (this.earliestAt === null || at < this.earliestAt) this.earliestAt = at;
  }

  /** The rows due at `now`, the oldest first, at most `limit`. */
  due(now: number, limit: number): OutboxRow[] {
    return this.sql
      .exec<Row>("SELECT * FROM webhook_outbox WHERE next_at <= ? ORDER BY next_at LIMIT ?", now, limit)
      .toArray()
      .map((row) => ({
        deliveryId: row.delivery_id,
        responseId: row.response_id,
        type: row.type,
        body: row.body,
        createdAt: row.created_at,
        attempts: row.attempts,
        nextAt: row.next_at,
      }));
  }

  /** An attempt starts: it is counted, marked in flight and due again at `retryAt` unless settled first. */
  lease(deliveryId: string, attempts: number, retryAt: number): void {
    this.sql.exec(
      "UPDATE webhook_outbox SET attempts = ?, next_at = ?, in_flight = 1 WHERE delivery_id = ?",
      attempts,
      retryAt,
      deliveryId,
    );
    this.earliestAt = this.readEarliest();
  }

  /** An attempt failed: the next one is due at `nextAt`; what the receiver answered is kept. */
  failed(deliveryId: string, nextAt: number, status: number | null, error: string): void {
    this.sql.exec(
      "UPDATE webhook_outbox SET next_at = ?, in_flight = 0, last_status = ?, last_error = ? WHERE delivery_id = ?",
      nextAt,
      status,
      error,
      deliveryId,
    );
    this.earliestAt = this.readEarliest();
  }

  /**
   * On wake: an attempt still marked in flight was cut short with the instance that made it (none
   * of this one's has started yet), so it is due again at `now`.
   * @returns how many were.
   */
  recoverInFlight(now: number): number {
    const recovered = this.sql.exec(
      "UPDATE webhook_outbox SET next_at = ?, in_flight = 0, last_error = 'cut short by a restart' WHERE in_flight = 1",
      now,
    ).rowsWritten;
    if (recovered > 0) this.earliestAt = this.readEarliest();
    return recovered;
  }

  /** The event's delivery is settled (delivered or given up): its row goes. */
  settle(deliveryId: string): void {
    this.sql.exec("DELETE FROM webhook_outbox WHERE delivery_id = ?", deliveryId);
    this.earliestAt = this.readEarliest();
  }

  /** When the next attempt is due (ms), or null when the outbox is empty. */
  earliest(): number | null {
    return this.earliestAt;
  }

  private readEarliest(): number | null {
    return this.sql.exec<{ at: number | null }>("SELECT MIN(next_at) AS at FROM webhook_outbox").one().at;
  }
}
