/**
 * Webhooks of background responses (issue #25 item 2; docs/webhooks.md): a tenant's
 * endpoint and signing secret set through the admin API; when a background response ends, its
 * session delivers `response.completed` / `failed` / `cancelled` / `incomplete` in OpenAI's payload
 * shape with the Standard Webhooks headers, which the real `openai` SDK's `webhooks.unwrap()`
 * verifies; no key travels; an endpoint that was down gets it after retries, and a delivery cut
 * short by a restart of the session is made again; a loopback target the operator did not allow is
 * refused, by the admin API and again before any delivery.
 * Every test makes its own tenant (admin API), so its endpoint is its own; the receiver
 * (test/support/webhook-receiver.ts) records each attempt's raw body and headers.
 */
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import OpenAI from "openai";
import { describe, expect, inject, it } from "vitest";
import type { TenantDurableObject } from "../../src/tenancy/tenant-do.ts";
import { newSigningSecret } from "../../src/webhooks/standard-webhooks.ts";
import { admin, tenantWithKey } from "../support/admin.ts";
import { sessionStub } from "../support/session-stub.ts";
import { testId } from "../support/test-id.ts";
import type { ReceivedAttempt } from "../support/webhook-receiver.ts";
import { uniqueSession, workerFetch } from "../support/ws-client.ts";

const MODEL = "deltagate-sim";

/** A tenant with a key, a session and a webhook endpoint at the receiver (`query`: its plan). */
async function tenantWithWebhook(label: string, query = "") {
  const { tenant, key } = await tenantWithKey(label);
  const name = `${label}-${testId().slice(0, 8)}`;
  const url = `${inject("webhookReceiverUrl")}/hooks/${name}${query}`;
  const set = await admin(`/tenants/${tenant}/webhook`, { method: "PUT", body: { url } });
  expect(set.status).toBe(200);
  const { secret } = (await set.json()) as { secret: string };
  return { tenant, key, name, secret, session: uniqueSession(label) };
}

async function create(key: string, session: string, body: Record<string, unknown>) {
  const res = await workerFetch("/v1/responses", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "session-id": session },
    body: JSON.stringify({ model: MODEL, ...body }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { id: string; status: string };
}

async function attempts(name: string): Promise<ReceivedAttempt[]> {
  const res = await fetch(`${inject("webhookReceiverUrl")}/_ctl/deliveries?name=${encodeURIComponent(name)}`);
  return ((await res.json()) as { data: ReceivedAttempt[] }).data;
}

/** Rows still in the session's webhook outbox. */
function outboxRows(tenant: string, session: string): Promise<number> {
  return runInDurableObject(
    sessionStub(tenant, session),
    (_instance, state) =>
      state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM webhook_outbox").one().n,
  );
}

/** What the `openai` SDK makes of an attempt with `secret` (throws when it does not verify). */
function unwrap(attempt: ReceivedAttempt, secret: string) {
  return new OpenAI({ apiKey: "unused", webhookSecret: secret }).webhooks.unwrap(
    attempt.body,
    attempt.headers,
  );
}

/** The response id of a `response.*` event (throws for another type: no other is sent). */
function responseIdOf(event: Awaited<ReturnType<typeof unwrap>>): string {
  if (!("id" in event.data)) throw new Error(`not a response event: ${event.type}`);
  return event.data.id;
}

const poll = { timeout: 15_000 };

describe("webhooks", () => {
  it("admin API: sets an endpoint (its secret shown once), shows and removes it; refuses loopback and http", async () => {
    const { tenant } = await tenantWithKey("wh-admin");
    const url = `${inject("webhookReceiverUrl")}/hooks/admin`;
    const set = (await (
      await admin(`/tenants/${tenant}/webhook`, { method: "PUT", body: { url } })
    ).json()) as {
      url: string;
      secret: string;
    };
    expect(set.url).toBe(url);
    expect(set.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const shown = await (await admin(`/tenants/${tenant}/webhook`)).text();
    expect(JSON.parse(shown)).toMatchObject({ object: "webhook_endpoint", url });
    expect(shown).not.toContain(set.secret.slice(6));
    expect(await (await admin(`/tenants/${tenant}`)).json()).toMatchObject({ webhook_url: url });
    // An operator's own secret is kept; a malformed one is refused.
    const own = newSigningSecret();
    const kept = (await (
      await admin(`/tenants/${tenant}/webhook`, { method: "PUT", body: { url, secret: own } })
    ).json()) as { secret: string };
    expect(kept.secret).toBe(own);
    const bad = await admin(`/tenants/${tenant}/webhook`, {
      method: "PUT",
      body: { url, secret: "whsec_short" },
    });
    expect(bad.status).toBe(400);
    for (const refused of [
      "http://127.0.0.1:9/hook", // loopback, not the allowed origin
      "http://localhost/hook",
      "https://10.1.2.3/hook",
      "https://[::1]/hook",
      "https://169.254.169.254/latest",
      "http://example.com/hook", // public, but not https
      "https://user:pass@example.com/hook",
    ]) {
      const res = await admin(`/tenants/${tenant}/webhook`, { method: "PUT", body: { url: refused } });
      expect(res.status, refused).toBe(400);
      expect(((await res.json()) as { error: { param: string } }).error.param, refused).toBe("url");
    }
    expect((await admin(`/tenants/${tenant}/webhook`, { method: "DELETE" })).status).toBe(200);
    expect((await admin(`/tenants/${tenant}/webhook`)).status).toBe(404);
  });

  it("delivers response.completed of a background response once, verified by the openai SDK, with no key", async () => {
    const { tenant, key, name, secret, session } = await tenantWithWebhook("wh-completed");
    await create(key, session, { input: "a foreground turn [sim:tokens=5]" }); // sends no webhook
    const response = await create(key, session, { input: "hi [sim:tokens=5]", background: true });
    await expect.poll(async () => (await attempts(name)).some((a) => a.status === 200), poll).toBe(true);
    await expect.poll(() => outboxRows(tenant, session), poll).toBe(0);
    const [attempt, ...others] = await attempts(name);
    expect(others).toEqual([]);
    const event = await unwrap(attempt!, secret);
    expect(event).toMatchObject({ object: "event", type: "response.completed", data: { id: response.id } });
    expect(event.id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(attempt!.headers["webhook-id"]).toBe(event.id.replace("evt_", "wh_"));
    expect(attempt!.headers["content-type"]).toBe("application/json");
    // Nothing but the event: no credential in a header or in the body.
    expect(attempt!.headers.authorization).toBeUndefined();
    expect(attempt!.headers["api-key"]).toBeUndefined();
    const sent = JSON.stringify(attempt);
    for (const credential of [key, "sim-test-key", secret]) expect(sent).not.toContain(credential);
    expect(Object.keys(JSON.parse(attempt!.body)).sort()).toEqual([
      "created_at",
      "data",
      "id",
      "object",
      "type",
    ]);
    // A tampered body does not verify.
    await expect(
      unwrap({ ...attempt!, body: attempt!.body.replace("completed", "failed") }, secret),
    ).rejects.toThrow();
  });

  it("announces failed, cancelled and incomplete background responses by their own event types", async () => {
    const { key, name, secret, session } = await tenantWithWebhook("wh-types");
    const failed = await create(key, session, { input: "x [sim:fail=before]", background: true });
    const hold = `wh-types-${testId()}`;
    const cancelled = await create(key, session, {
      input: `x [sim:hold=${hold}] [sim:tools=0]`,
      background: true,
    });
    const incomplete = await create(key, session, {
      input: "x [sim:tokens=200] [sim:tools=0]",
      max_output_tokens: 16,
      background: true,
    });
    await workerFetch(`/v1/responses/${cancelled.id}/cancel`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}` },
    });
    await fetch(`${inject("simulatorUrl")}/_sim/release?hold=${encodeURIComponent(hold)}`, {
      method: "POST",
    });
    await expect
      .poll(async () => (await attempts(name)).filter((a) => a.status === 200).length, poll)
      .toBe(3);
    const events = await Promise.all((await attempts(name)).map((a) => unwrap(a, secret)));
    const typeOf = (id: string) => events.find((e) => responseIdOf(e) === id)?.type;
    expect([typeOf(failed.id), typeOf(cancelled.id), typeOf(incomplete.id)]).toEqual([
      "response.failed",
      "response.cancelled",
      "response.incomplete",
    ]);
  });

  it("retries an endpoint that was down: 503 three times, then delivered, every attempt the same event", async () => {
    const { tenant, key, name, secret, session } = await tenantWithWebhook("wh-down", "?fail=3");
    const response = await create(key, session, { input: "hi [sim:tokens=5]", background: true });
    await expect
      .poll(async () => (await attempts(name)).map((a) => a.status), poll)
      .toEqual([503, 503, 503, 200]);
    await expect.poll(() => outboxRows(tenant, session), poll).toBe(0);
    const all = await attempts(name);
    expect(new Set(all.map((a) => a.headers["webhook-id"])).size).toBe(1);
    expect(new Set(all.map((a) => a.body)).size).toBe(1);
    for (const attempt of all) expect(responseIdOf(await unwrap(attempt, secret))).toBe(response.id);
  });

  it("keeps retrying across an eviction of the session while the endpoint is down, and delivers when it is back", async () => {
    const { tenant, key, name, secret, session } = await tenantWithWebhook("wh-evict", "?down=1");
    const response = await create(key, session, { input: "hi [sim:tokens=5]", background: true });
    await expect.poll(async () => (await attempts(name)).length, poll).toBeGreaterThanOrEqual(2);
    // Evicted while the event waits for its next attempt: the retries are the outbox's row and the
    // alarm, not the instance's memory.
    await evictDurableObject(sessionStub(tenant, session));
    expect(await outboxRows(tenant, session)).toBe(1);
    await fetch(`${inject("webhookReceiverUrl")}/_ctl/up?name=${encodeURIComponent(name)}`, {
      method: "POST",
    });
    await expect.poll(async () => (await attempts(name)).at(-1)?.status, poll).toBe(200);
    await expect.poll(() => outboxRows(tenant, session), poll).toBe(0);
    const all = await attempts(name);
    expect(all.slice(0, -1).every((a) => a.status === 503)).toBe(true);
    expect(all.filter((a) => a.status === 200)).toHaveLength(1);
    expect(new Set(all.map((a) => a.headers["webhook-id"])).size).toBe(1);
    expect(responseIdOf(await unwrap(all.at(-1)!, secret))).toBe(response.id);
  });

  it("delivers again after the session restarted while a delivery was in flight", async () => {
    const { tenant, key, name, secret, session } = await tenantWithWebhook("wh-restart", "?hold=1");
    const response = await create(key, session, { input: "hi [sim:tokens=5]", background: true });
    await expect.poll(async () => (await attempts(name)).length, poll).toBe(1);
    await runInDurableObject(sessionStub(tenant, session), (_instance, state) => {
      state.abort("simulated restart");
    }).catch(() => {});
    // The held attempt's answer now reaches nobody: the restarted session must send it again.
    await fetch(`${inject("webhookReceiverUrl")}/_ctl/release?name=${encodeURIComponent(name)}`, {
      method: "POST",
    });
    await expect.poll(() => outboxRows(tenant, session), poll).toBe(0);
    const [first, second] = await attempts(name);
    expect(second?.status).toBe(200);
    expect(second?.headers["webhook-id"]).toBe(first?.headers["webhook-id"]);
    expect(responseIdOf(await unwrap(second!, secret))).toBe(response.id);
  });

  it("refuses a loopback target the operator did not allow before any delivery, and drops its event", async () => {
    const { tenant, key } = await tenantWithKey("wh-loopback");
    const session = uniqueSession("wh-loopback");
    const name = `wh-loopback-${testId().slice(0, 8)}`;
    // The receiver itself, named `localhost`: the same server, but not the allowed origin.
    const url = `http://localhost:${new URL(inject("webhookReceiverUrl")).port}/hooks/${name}`;
    expect((await admin(`/tenants/${tenant}/webhook`, { method: "PUT", body: { url } })).status).toBe(400);
    // Set behind the admin API's back, as a changed setting would leave it: delivery checks again.
    await runInDurableObject(env.TENANTS!.getByName(tenant), (instance: TenantDurableObject) =>
      instance.setWebhook(url, newSigningSecret()),
    );
    const response = await create(key, session, { input: "hi [sim:tokens=5]", background: true });
    await expect
      .poll(async () => {
        const got = await workerFetch(`/v1/responses/${response.id}`, {
          headers: { authorization: `Bearer ${key}` },
        });
        return ((await got.json()) as { status: string }).status;
      }, poll)
      .toBe("completed");
    await expect.poll(() => outboxRows(tenant, session), poll).toBe(0);
    expect(await attempts(name)).toEqual([]);
  });
});
