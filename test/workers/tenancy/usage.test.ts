/**
 * The usage ledger (issue #19 §5): every finished turn — completed, failed, cancelled — lands in
 * its tenant's ledger without blocking the turn; `GET /v1/usage` shows a tenant its own figures by
 * day and model; the outbox survives the session's eviction (the alarm flushes what an earlier
 * instance recorded) and a batch delivered twice is counted once.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { dayOf } from "../../../src/tenancy/clock.ts";
import { UsageOutbox } from "../../../src/tenancy/usage-outbox.ts";
import type { UsageBucket } from "../../../src/tenancy/usage-report.ts";
import { admin, tenantWithKey } from "../../support/admin.ts";
import { sessionStub } from "../../support/session-stub.ts";
import { connect, uniqueSession, workerFetch } from "../../support/ws-client.ts";

const MODEL = "deltagate-sim";

async function usageOf(key: string): Promise<UsageBucket[]> {
  const response = await workerFetch("/v1/usage", { headers: { authorization: `Bearer ${key}` } });
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: UsageBucket[] }).data;
}

function post(key: string, body: Record<string, unknown>, session?: string): Promise<Response> {
  return workerFetch("/v1/responses", {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      ...(session ? { "session-id": session } : {}),
    },
    body: JSON.stringify(body),
  });
}

describe("usage ledger", () => {
  it("counts completed, failed and cancelled turns, by day and model, for the tenant only", async () => {
    const { key, tenant } = await tenantWithKey("usage");
    const other = await tenantWithKey("usage-other");
    // completed, over the WebSocket
    const ws = await connect({ key, session: uniqueSession("usage") });
    ws.send({ type: "response.create", model: MODEL, input: "count me [sim:tokens=12]" });
    expect((await ws.turn(0)).at(-1)?.type).toBe("response.completed");
    ws.close();
    // failed, over HTTP
    const failed = await post(key, { model: MODEL, input: "fail [sim:fail=before]" });
    expect(failed.status).toBeGreaterThanOrEqual(500);
    // cancelled, over HTTP: held by the simulator until cancelled
    const hold = uniqueSession("usage-hold");
    const session = uniqueSession("usage-cancel");
    const streaming = await post(
      key,
      { model: MODEL, input: `hold [sim:hold=${hold}]`, stream: true },
      session,
    );
    const reader = streaming.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    const id = /"id":"(resp_[^"]+)"/.exec(first)?.[1];
    expect(id).toBeDefined();
    const cancelled = await workerFetch(`/v1/responses/${id}/cancel`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}` },
    });
    expect(cancelled.status).toBe(200);
    await fetch(`${inject("simulatorUrl")}/_sim/release?hold=${hold}`, { method: "POST" });
    await reader.cancel();

    await expect
      .poll(async () => (await usageOf(key)).find((b) => b.model === MODEL)?.statuses, { timeout: 15_000 })
      .toEqual({ completed: 1, failed: 1, cancelled: 1 });
    const [bucket] = await usageOf(key);
    expect(bucket).toMatchObject({ day: dayOf(Date.now()), model: MODEL, turns: 3 });
    expect(bucket!.output_tokens).toBeGreaterThanOrEqual(12);
    expect(bucket!.input_tokens).toBeGreaterThan(0);
    // The other tenant sees none of it; the admin sees both.
    expect(await usageOf(other.key)).toEqual([]);
    const all = (await (await admin(`/usage?tenant=${tenant}`)).json()) as {
      data: { tenant: string; turns: number }[];
    };
    expect(all.data).toEqual([expect.objectContaining({ tenant, turns: 3 })]);
  });

  it("flushes from the alarm what an evicted instance recorded, once", async () => {
    const { key, tenant, keyId } = await tenantWithKey("evicted");
    const session = uniqueSession("evicted");
    // A session of the tenant (it now belongs to it) …
    expect((await post(key, { model: MODEL, input: "own it [sim:tokens=3]" }, session)).status).toBe(200);
    await expect.poll(async () => (await usageOf(key))[0]?.turns ?? 0, { timeout: 10_000 }).toBe(1);
    // … whose next turn was recorded (as by an instance that died before flushing it: the row is
    // written behind the live instance's back).
    const stub = sessionStub(tenant, session);
    await runInDurableObject(stub, (_instance, state) => {
      new UsageOutbox(state.storage.sql).add(
        {
          day: dayOf(Date.now()),
          model: MODEL,
          keyId,
          status: "completed",
          inputTokens: 5,
          cachedTokens: 0,
          cacheWriteTokens: 0,
          outputTokens: 7,
          costNanoUsd: null,
        },
        Date.now(),
      );
    });
    // The alarm (armed by the first turn's row) flushes whatever the outbox holds.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    await expect.poll(async () => (await usageOf(key))[0]?.turns, { timeout: 10_000 }).toBe(2);
    // Delivered again (a flush whose reply was lost): counted once.
    const source = stub.id.toString();
    const entry = {
      seq: 1,
      day: dayOf(Date.now()),
      model: MODEL,
      keyId,
      status: "completed",
      inputTokens: 1,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      outputTokens: 1,
      costNanoUsd: null,
    };
    const tenants = env.TENANTS!.getByName(tenant);
    const report = { source: `${source}-replay`, entries: [entry], admitted: [], keyIds: [] };
    await tenants.sync(report);
    await tenants.sync(report);
    expect((await usageOf(key))[0]?.turns).toBe(3);
    const outbox = await runInDurableObject(
      stub,
      (_instance, state) =>
        state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM usage_outbox").one().n,
    );
    expect(outbox).toBe(0);
  });
});
