/**
 * The webhook deliveries of a session (src/session/webhook-deliveries.ts) over an in-memory outbox
 * and a stubbed `fetch`: only an ended background response makes an event; the wake makes an
 * attempt an earlier instance left in flight due at once and arms the alarm; an endpoint that
 * cannot be read is retried, not dropped; a refused target, 410 and the last attempt drop the
 * event (logged), no endpoint drops it silently; the deadline is the outbox's earliest due attempt.
 */
import { describe, expect, it } from "vitest";
import { WebhookDeliveries } from "../../../src/session/webhook-deliveries.ts";
import type { ResponseOutcome, ResponseRecord } from "../../../src/store/conversation-store.ts";
import type { OutboxRow, WebhookOutbox } from "../../../src/store/webhook-outbox.ts";
import type { DeliveryTarget } from "../../../src/webhooks/delivery.ts";
import { newSigningSecret } from "../../../src/webhooks/standard-webhooks.ts";

/** The outbox's contract, in memory (webhook-outbox.ts keeps it in SQLite). */
class MemoryOutbox {
  readonly rows = new Map<string, OutboxRow & { inFlight: boolean }>();
  add(event: { deliveryId: string; responseId: string; type: string; body: string }, at: number): void {
    this.rows.set(event.deliveryId, { ...event, createdAt: at, attempts: 0, nextAt: at, inFlight: false });
  }
  due(now: number, limit: number): OutboxRow[] {
    return [...this.rows.values()].filter((r) => r.nextAt <= now).slice(0, limit);
  }
  lease(id: string, attempts: number, retryAt: number): void {
    Object.assign(this.rows.get(id)!, { attempts, nextAt: retryAt, inFlight: true });
  }
  failed(id: string, nextAt: number): void {
    Object.assign(this.rows.get(id)!, { nextAt, inFlight: false });
  }
  recoverInFlight(now: number): number {
    const cut = [...this.rows.values()].filter((r) => r.inFlight);
    for (const row of cut) Object.assign(row, { nextAt: now, inFlight: false });
    return cut.length;
  }
  settle(id: string): void {
    this.rows.delete(id);
  }
  earliest(): number | null {
    const times = [...this.rows.values()].map((r) => r.nextAt);
    return times.length === 0 ? null : Math.min(...times);
  }
}

const record = (background: boolean) => ({ id: "resp_1", background }) as ResponseRecord;
const outcome = { status: "completed", completedAt: 1_000 } as ResponseOutcome;
const run = (now: number) => ({ now, open: new Set<string>(), gone: () => {} });

function setup(options: {
  target?: () => Promise<DeliveryTarget | null>;
  status?: number;
  maxAttempts?: number;
  privateTargets?: "all" | Set<string>;
}) {
  const outbox = new MemoryOutbox();
  const logs: string[] = [];
  const sent: string[] = [];
  let clock = 1_000;
  let alarms = 0;
  const secret = newSigningSecret();
  const deliveries = new WebhookDeliveries({
    outbox: outbox as unknown as WebhookOutbox,
    target: options.target ?? (async () => ({ url: "https://hooks.example.com/in", secret })),
    privateTargets: options.privateTargets ?? new Set(),
    retry: { baseMs: 100, maxAttempts: options.maxAttempts ?? 5 },
    now: () => clock,
    send: (async (url: string) => {
      sent.push(url);
      return new Response(null, { status: options.status ?? 200 });
    }) as unknown as typeof fetch,
    scheduleAlarm: () => {
      alarms += 1;
    },
    log: (where, _responseId, cause) => logs.push(`${where}: ${String(cause)}`),
  });
  return {
    outbox,
    deliveries,
    logs,
    sent,
    alarms: () => alarms,
    tick: (ms: number) => {
      clock += ms;
      return clock;
    },
    /** Sets the clock to `at` and returns it. */
    at: (at: number) => {
      clock = at;
      return clock;
    },
  };
}

describe("WebhookDeliveries", () => {
  it("makes an event only for a background response that ended, due at once", () => {
    const { outbox, deliveries } = setup({});
    deliveries.ended(record(false), outcome);
    deliveries.ended(record(true), null);
    expect(outbox.rows.size).toBe(0);
    deliveries.ended(record(true), outcome);
    expect(outbox.rows.size).toBe(1);
    expect(deliveries.nextDeadline()).toBe(1_000);
  });

  it("delivers a due event and settles it; the deadline goes", async () => {
    const { outbox, deliveries, sent, tick } = setup({});
    deliveries.ended(record(true), outcome);
    await deliveries.onAlarm(run(tick(0)));
    expect(sent).toEqual(["https://hooks.example.com/in"]);
    expect(outbox.rows.size).toBe(0);
    expect(deliveries.nextDeadline()).toBeNull();
  });

  it("on wake, makes an attempt an earlier instance left in flight due now, and arms the alarm", () => {
    const { outbox, deliveries, alarms } = setup({});
    deliveries.ended(record(true), outcome);
    const [row] = outbox.due(1_000, 1);
    outbox.lease(row!.deliveryId, 1, 99_999); // an attempt the restart cut short
    deliveries.onWake();
    expect(deliveries.nextDeadline()).toBe(1_000);
    expect(alarms()).toBe(1);
  });

  it("retries an endpoint that cannot be read instead of dropping the event", async () => {
    const { outbox, deliveries, sent, logs } = setup({
      target: () => Promise.reject(new Error("tenant unreachable")),
    });
    deliveries.ended(record(true), outcome);
    await deliveries.onAlarm(run(1_000));
    expect(sent).toEqual([]);
    expect(outbox.rows.size).toBe(1);
    expect(deliveries.nextDeadline()).toBeGreaterThan(1_000);
    expect(logs[0]).toMatch(/unreadable/);
  });

  it("drops the event without a word when the tenant has no endpoint", async () => {
    const { outbox, deliveries, logs, sent } = setup({ target: async () => null });
    deliveries.ended(record(true), outcome);
    await deliveries.onAlarm(run(1_000));
    expect(outbox.rows.size).toBe(0);
    expect(sent).toEqual([]);
    expect(logs).toEqual([]);
  });

  it("drops the event (logged) for a refused target or a 410", async () => {
    for (const [options, why] of [
      [{ target: async () => ({ url: "https://127.0.0.1/in", secret: newSigningSecret() }) }, /Private/],
      [{ status: 410 }, /410 Gone/],
    ] as const) {
      const { outbox, deliveries, logs } = setup(options);
      deliveries.ended(record(true), outcome);
      await deliveries.onAlarm(run(1_000));
      expect(outbox.rows.size).toBe(0);
      expect(logs.join("\n")).toMatch(why);
    }
  });

  it("retries a failing endpoint with backoff, then gives up after the last attempt", async () => {
    const { outbox, deliveries, sent, logs, at } = setup({ status: 503, maxAttempts: 3 });
    deliveries.ended(record(true), outcome);
    await deliveries.onAlarm(run(at(1_000)));
    for (let attempt = 1; attempt < 3; attempt++) {
      expect(sent).toHaveLength(attempt);
      const due = deliveries.nextDeadline()!;
      expect(due).toBeGreaterThan(1_000);
      await deliveries.onAlarm(run(at(due - 1))); // not due yet: nothing sent
      expect(sent).toHaveLength(attempt);
      await deliveries.onAlarm(run(at(due)));
    }
    expect(sent).toHaveLength(3);
    expect(outbox.rows.size).toBe(0);
    expect(logs.join("\n")).toMatch(/not delivered after 3 attempts \(last: HTTP 503\)/);
  });
});
