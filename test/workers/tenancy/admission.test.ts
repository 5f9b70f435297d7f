/**
 * One admission and one way out (issue #23 items 1, 2 and 5; src/session/admission.ts): compact
 * and input_tokens pass the tenant's allowed models as a create does, over HTTP and WebSocket;
 * compact counts as a turn (turns_per_minute, tokens_per_day, a secret's max_turns) and lands in
 * the ledger; compact and input_tokens forwarded upstream carry the tenant's own key; every ledger
 * row names the key that made its call (a minted key's id over WebSocket too, a client secret's
 * `secret:<id>`); a turn a restart ended is booked once; a client secret may not read the
 * tenant's ledger.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { verifyClientSecret } from "../../../src/auth/client-secret.ts";
import { dayOf } from "../../../src/tenancy/clock.ts";
import { admin, tenantWithKey } from "../../support/admin.ts";
import { accepted, mintSecret, TEST_SIGNING_KEY, upgradeWith } from "../../support/client-secrets.ts";
import { sessionStub } from "../../support/session-stub.ts";
import { testId } from "../../support/test-id.ts";
import { connect, simulatorRequests, uniqueSession, workerFetch } from "../../support/ws-client.ts";

const MODEL = "deltagate-sim";
/** A route whose compact and input_tokens go to the simulator (vitest.config.ts). */
const FORWARDING_MODEL = "sim-cmp-up";

/** Waits, when the current minute is about to end, for the next one (per-minute windows). */
async function awayFromMinuteEnd(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 45_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinute));
}

function call(path: string, key: string, body: Record<string, unknown>, session?: string): Promise<Response> {
  return workerFetch(path, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      ...(session ? { "session-id": session } : {}),
    },
    body: JSON.stringify(body),
  });
}

const create = (key: string, body: Record<string, unknown>, session?: string) =>
  call("/v1/responses", key, body, session);
const compact = (key: string, body: Record<string, unknown>, session?: string) =>
  call("/v1/responses/compact", key, body, session);
const inputTokens = (key: string, body: Record<string, unknown>, session?: string) =>
  call("/v1/responses/input_tokens", key, body, session);

async function codeOf(response: Response): Promise<string> {
  return ((await response.json()) as { error: { code: string } }).error.code;
}

interface LedgerRow {
  model: string;
  key_id: string;
  status: string;
  turns: number;
  input_tokens: number;
  output_tokens: number;
}

/** The tenant's ledger rows (by day, model, key and status), as its Durable Object holds them. */
function ledger(tenant: string): Promise<LedgerRow[]> {
  return runInDurableObject(env.TENANTS!.getByName(tenant), (_instance, state) =>
    state.storage.sql
      .exec<Record<string, SqlStorageValue>>(
        "SELECT model, key_id, status, turns, input_tokens, output_tokens FROM usage WHERE day = ? ORDER BY key_id, status",
        dayOf(Date.now()),
      )
      .toArray()
      .map((row) => row as unknown as LedgerRow),
  );
}

/** The ledger's turns of `tenant`, once `expected` many have arrived. */
async function ledgerOnce(tenant: string, expected: number) {
  await expect
    .poll(async () => (await ledger(tenant)).reduce((n, row) => n + row.turns, 0), { timeout: 15_000 })
    .toBe(expected);
  return ledger(tenant);
}

/** The simulator's fingerprint of a bearer key (simulator/recorder.ts `keyFingerprint`). */
async function fingerprint(key: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)));
  return [...digest]
    .map((byte) => byte.toString(16).padStart(2, "0"))
    .join("")
    .slice(0, 16);
}

describe("a tenant's allowed models", () => {
  it("refuse another model with 404 on create (HTTP and WebSocket), compact and input_tokens", async () => {
    const { key } = await tenantWithKey("models", {}, { models: [MODEL] });
    const other = "sim-chat";
    const refused = [
      await create(key, { model: other, input: "hi" }),
      await compact(key, { model: other, input: "hi" }),
      await inputTokens(key, { model: other, input: "hi" }),
    ];
    for (const response of refused) {
      expect(response.status).toBe(404);
      expect(await codeOf(response)).toBe("model_not_found");
    }
    const ws = await connect({ key, session: uniqueSession("models") });
    ws.send({ type: "response.create", model: other, input: "hi" });
    const [error] = await ws.turn(0);
    expect(error).toMatchObject({ type: "error", status: 404, error: { code: "model_not_found" } });
    ws.close();
    // The allowed model still passes every entry point.
    expect((await compact(key, { model: MODEL, input: "hi [sim:tokens=3]" })).status).toBe(200);
    expect((await inputTokens(key, { model: MODEL, input: "hi" })).status).toBe(200);
  });
});

describe("compact is admitted and metered as a turn", () => {
  it("counts against turns_per_minute and lands in the ledger under its key", async () => {
    await awayFromMinuteEnd();
    const { key, keyId, tenant } = await tenantWithKey("cmp-rpm", { turns_per_minute: 2 });
    const session = uniqueSession("cmp-rpm");
    expect((await compact(key, { model: MODEL, input: "one [sim:tokens=3]" }, session)).status).toBe(200);
    expect((await compact(key, { model: MODEL, input: "two [sim:tokens=3]" }, session)).status).toBe(200);
    const third = await create(key, { model: MODEL, input: "three" }, session);
    expect(third.status).toBe(429);
    expect(await codeOf(third)).toBe("rate_limit_exceeded");
    const rows = await ledgerOnce(tenant, 2);
    expect(rows).toEqual([
      expect.objectContaining({ model: MODEL, key_id: keyId, status: "completed", turns: 2 }),
    ]);
    expect(rows[0]!.input_tokens).toBeGreaterThan(0);
  });

  it("counts against tokens_per_day", async () => {
    const { key, tenant } = await tenantWithKey("cmp-tpd", { tokens_per_day: 10 });
    const session = uniqueSession("cmp-tpd");
    const input = "a context long enough to spend the day's ten tokens at once [sim:tokens=20]";
    expect((await compact(key, { model: MODEL, input }, session)).status).toBe(200);
    const next = await compact(key, { model: MODEL, input: "again" }, session);
    expect(next.status).toBe(429);
    expect(((await next.json()) as { error: { type: string } }).error.type).toBe("tokens");
    const [row] = await ledgerOnce(tenant, 1);
    expect(row!.input_tokens + row!.output_tokens).toBeGreaterThan(10);
  });

  it("counts against a client secret's max_turns", async () => {
    const { value } = await mintSecret({ session: { max_turns: 2 } });
    const body = { model: MODEL, input: "compact me [sim:tokens=3]" };
    expect((await compact(value, body)).status).toBe(200);
    expect((await create(value, { model: MODEL, input: "a turn [sim:tokens=3]" })).status).toBe(200);
    const third = await compact(value, body);
    expect(third.status).toBe(403);
    expect(await codeOf(third)).toBe("client_secret_turns_exhausted");
  });
});

describe("the admission's order", () => {
  it("a turn the tenant refuses gives the client secret its counted turn back", async () => {
    const { key } = await tenantWithKey("refund", {}, { models: [MODEL] });
    const { value } = await mintSecret({ session: { max_turns: 1 } }, key);
    const refused = await create(value, { model: "sim-chat", input: "not this model" });
    expect(refused.status).toBe(404);
    expect((await create(value, { model: MODEL, input: "the one turn [sim:tokens=2]" })).status).toBe(200);
    const spent = await compact(value, { model: MODEL, input: "one too many" });
    expect(spent.status).toBe(403);
    expect(await codeOf(spent)).toBe("client_secret_turns_exhausted");
  });
});

describe("compact and input_tokens forwarded upstream", () => {
  it("carry the tenant's own upstream key, and are booked under the caller's key", async () => {
    const { key, keyId, tenant } = await tenantWithKey("cmp-key");
    const own = `tenantOwn${testId().replaceAll("-", "")}Key`;
    const set = await admin(`/tenants/${tenant}`, { method: "PATCH", body: { upstream_api_key: own } });
    expect(set.status).toBe(200);
    const marker = `fwd-${testId()}`;
    const session = uniqueSession("cmp-key");
    const compacted = await compact(key, { model: FORWARDING_MODEL, input: `${marker} compact` }, session);
    expect(compacted.status).toBe(200);
    const counted = await inputTokens(key, { model: FORWARDING_MODEL, input: `${marker} count` }, session);
    expect(counted.status).toBe(200);
    const seen = await simulatorRequests(inject("simulatorUrl"), marker);
    const paths = seen.map((r) => r.path).sort();
    expect(paths).toEqual(["/v1/responses/compact", "/v1/responses/input_tokens"]);
    const expected = await fingerprint(own);
    expect(seen.map((r) => r.keyFingerprint)).toEqual([expected, expected]);
    // Both calls reached the upstream for the tenant: both are in its ledger, under its key.
    const rows = await ledgerOnce(tenant, 2);
    expect(rows.every((row) => row.key_id === keyId && row.model === FORWARDING_MODEL)).toBe(true);
  });
});

describe("the ledger names the key that made each call", () => {
  it("a WebSocket turn: its minted key's id; a client secret's turn: `secret:<id>`", async () => {
    const { key, keyId, tenant } = await tenantWithKey("ws-key");
    const ws = await connect({ key, session: uniqueSession("ws-key") });
    ws.send({ type: "response.create", model: MODEL, input: "by key [sim:tokens=3]" });
    expect((await ws.turn(0)).at(-1)?.type).toBe("response.completed");
    ws.close();
    expect(await ledgerOnce(tenant, 1)).toEqual([expect.objectContaining({ key_id: keyId, turns: 1 })]);

    const { value } = await mintSecret({}, key);
    const verified = await verifyClientSecret(value, TEST_SIGNING_KEY, Math.floor(Date.now() / 1000));
    if (!verified.ok) throw new Error("minted secret does not verify");
    const bySecret = await accepted(await upgradeWith({ query: `client_secret=${value}` }));
    bySecret.send({ type: "response.create", model: MODEL, input: "by secret [sim:tokens=3]" });
    expect((await bySecret.turn(0)).at(-1)?.type).toBe("response.completed");
    bySecret.close();
    const rows = await ledgerOnce(tenant, 2);
    expect(rows.map((row) => row.key_id).sort()).toEqual([keyId, `secret:${verified.claims.id}`].sort());
  });
});

describe("a cold session's admission (a round trip to the tenant first)", () => {
  it("keeps a lane's creates in the order they came, and counts them", async () => {
    const { key, tenant } = await tenantWithKey("cold", { turns_per_minute: 50 });
    const session = uniqueSession("cold");
    const ws = await connect({ key, session });
    // As a wake from hibernation leaves it: no lease, so the next admission waits for a sync (the
    // verdict is a promise) while the creates behind it keep their places.
    const stub = sessionStub(tenant, session);
    type Gate = { lease: { expiresAt: number }; syncs: number };
    const gateOf = (instance: unknown) =>
      (instance as { parts: { tenancy: { gate: Gate } } }).parts.tenancy.gate;
    const syncsBefore = await runInDurableObject(stub, (instance) => {
      const gate = gateOf(instance);
      gate.lease.expiresAt = 0;
      return gate.syncs;
    });
    for (const n of [1, 2, 3])
      ws.send({ type: "response.create", model: MODEL, input: `turn ${n} [sim:tokens=2]` });
    await ws.until((frames) => frames.filter((f) => f.type === "response.completed").length === 3);
    const created = ws.frames.filter((f) => f.type === "response.created");
    expect(created).toHaveLength(3);
    const completed = ws.frames
      .filter((f) => f.type === "response.completed")
      .map((f) => (f as unknown as { response: { id: string } }).response.id);
    expect(completed).toEqual(created.map((f) => (f as unknown as { response: { id: string } }).response.id));
    // In order: each response's input is the create sent in that place.
    for (const [i, id] of completed.entries()) {
      const items = (await (
        await workerFetch(`/v1/responses/${id}/input_items`, { headers: { authorization: `Bearer ${key}` } })
      ).json()) as { data: Array<{ content: Array<{ text: string }> }> };
      expect(items.data[0]?.content[0]?.text).toBe(`turn ${i + 1} [sim:tokens=2]`);
    }
    const syncsAfter = await runInDurableObject(stub, (instance) => gateOf(instance).syncs);
    expect(syncsAfter).toBeGreaterThan(syncsBefore);
    ws.close();
  });
});

describe("a turn a restart ended", () => {
  /** Resets the session's Durable Object as a crash would (in-memory state gone, storage kept). */
  async function crash(tenant: string, session: string): Promise<void> {
    await runInDurableObject(sessionStub(tenant, session), (_instance, state) => {
      state.abort("simulated crash");
    }).catch(() => {});
  }

  it("is booked once, as failed, under its key", async () => {
    const { key, keyId, tenant } = await tenantWithKey("restart");
    const session = uniqueSession("restart");
    const hold = uniqueSession("restart-hold");
    const ws = await connect({ key, session });
    ws.send({ type: "response.create", model: MODEL, input: `held [sim:hold=${hold}]` });
    await ws.until((frames) => frames.some((f) => f.type === "response.output_text.delta"));
    await crash(tenant, session);
    await fetch(`${inject("simulatorUrl")}/_sim/release?hold=${hold}`, { method: "POST" });
    // The next instance (woken by the next request) books it; another restart books nothing more.
    const after = await create(key, { model: MODEL, input: "after [sim:tokens=3]" }, session);
    expect(after.status).toBe(200);
    await crash(tenant, session);
    expect((await create(key, { model: MODEL, input: "again [sim:tokens=3]" }, session)).status).toBe(200);
    const rows = await ledgerOnce(tenant, 3);
    expect(rows).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ key_id: keyId, status: "failed", turns: 1 }),
        expect.objectContaining({ key_id: keyId, status: "completed", turns: 2 }),
      ]),
    );
    // Nothing left open, nothing left to send.
    const left = await runInDurableObject(
      sessionStub(tenant, session),
      (_instance, state) =>
        state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM usage_open").one().n,
    );
    expect(left).toBe(0);
  });
});

describe("a client secret", () => {
  it("gets 403 on GET /v1/usage (tenant-wide); its tenant's key reads it", async () => {
    const { value } = await mintSecret();
    const bySecret = await workerFetch("/v1/usage", { headers: { authorization: `Bearer ${value}` } });
    expect(bySecret.status).toBe(403);
    expect(await codeOf(bySecret)).toBe("client_secret_not_allowed");
    const byKey = await workerFetch("/v1/usage", { headers: { authorization: "Bearer dg-test-a" } });
    expect(byKey.status).toBe(200);
  });
});
