/**
 * Tenant limits under concurrency (issue #23, build 3; docs/tenancy.md "Limits under
 * concurrency"): the tenant's Durable Object leases what each session may admit
 * (src/tenancy/lease-policy.ts), so a burst spread over many fresh sessions admits no more than
 * the limit — `turns_per_minute` and `request_bytes_per_minute` exactly (per clock minute the
 * burst spans), for creates, compacts and `input_tokens` alike; `tokens_per_day` up to what calls
 * used beyond their reservation (none here: each reserves more than it uses), a continuation
 * reserving its history too — a warm turn admits out of its lease without a call, and an
 * admission that must ask an unreachable tenant fails closed. Counts, not timings; each burst
 * logs its `FIGURE` (the admitted counts docs/tenancy.md quotes).
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { minuteOf } from "../../../src/tenancy/clock.ts";
import type { TenantGate } from "../../../src/tenancy/tenant-gate.ts";
import { tenantWithKey } from "../../support/admin.ts";
import { sessionStub } from "../../support/session-stub.ts";
import { connect, type Frame, uniqueSession, workerFetch } from "../../support/ws-client.ts";

const MODEL = "deltagate-sim";
const TERMINAL = new Set(["response.completed", "response.failed", "response.incomplete", "error"]);

/** Waits, when the current minute is about to end, for the next one (per-minute windows). */
async function awayFromMinuteEnd(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 45_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinute));
}

function post(key: string, body: Record<string, unknown>, session?: string, path = "/v1/responses") {
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

/** The tenant gate of a session Durable Object (tests reach into the live instance). */
function gateOf(instance: unknown): TenantGate {
  return (instance as { parts: { tenancy: { gate: TenantGate } } }).parts.tenancy.gate;
}

describe("limits under concurrency", () => {
  it("turns_per_minute: 10 of 200 concurrent HTTP creates across fresh sessions, at most", async () => {
    await awayFromMinuteEnd();
    const { key } = await tenantWithKey("burst-http", { turns_per_minute: 10 });
    const first = minuteOf(Date.now());
    // No session header, a distinct conversation each: 200 affinity sessions, each cold.
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, i) => post(key, { model: MODEL, input: `burst ${i} [sim:tokens=3]` })),
    );
    const minutes = minuteOf(Date.now()) - first + 1;
    const statuses = responses.map((r) => r.status);
    await Promise.all(responses.map((r) => r.body?.cancel()));
    const admitted = statuses.filter((s) => s === 200).length;
    console.log("FIGURE http creates admitted", admitted, "of 200");
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    expect(admitted).toBeGreaterThan(0);
    expect(admitted).toBeLessThanOrEqual(10 * minutes);
  });

  it("turns_per_minute: 10 of 20 sockets × 3 creates, at most", async () => {
    await awayFromMinuteEnd();
    const { key } = await tenantWithKey("burst-ws", { turns_per_minute: 10 });
    const first = minuteOf(Date.now());
    const sockets = await Promise.all(
      Array.from({ length: 20 }, () => connect({ key, session: uniqueSession("burst-ws") })),
    );
    sockets.forEach((ws, s) => {
      for (let i = 0; i < 3; i++)
        ws.send({ type: "response.create", model: MODEL, input: `s${s} t${i} [sim:tokens=3]` });
    });
    const terminal = (frames: Frame[]) => frames.filter((f) => TERMINAL.has(f.type));
    await Promise.all(sockets.map((ws) => ws.until((frames) => terminal(frames).length >= 3, 60_000)));
    const minutes = minuteOf(Date.now()) - first + 1;
    const ends = sockets.flatMap((ws) => terminal(ws.frames));
    const completed = ends.filter((f) => f.type === "response.completed").length;
    const refused = ends.filter((f) => f.type === "error");
    console.log("FIGURE ws creates completed", completed, "of 60");
    expect(ends).toHaveLength(60);
    for (const error of refused) {
      expect((error as { error?: { code?: string } }).error?.code).toBe("rate_limit_exceeded");
    }
    expect(completed + refused.length).toBe(60);
    expect(completed).toBeGreaterThan(0);
    expect(completed).toBeLessThanOrEqual(10 * minutes);
    for (const ws of sockets) {
      expect(ws.closeEvent).toBeNull();
      ws.close();
    }
  });

  it("tokens_per_day: 50 concurrent turns stay within the budget (each reserved more than it used)", async () => {
    const limit = 100;
    const { key } = await tenantWithKey("burst-tokens", { tokens_per_day: limit });
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        post(key, { model: MODEL, input: `tokens ${i} [sim:tokens=20]`, max_output_tokens: 32 }),
      ),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    const used = await Promise.all(
      responses
        .filter((r) => r.status === 200)
        .map(async (r) => ((await r.json()) as { usage: { total_tokens: number } }).usage.total_tokens),
    );
    await Promise.all(responses.filter((r) => r.status !== 200).map((r) => r.body?.cancel()));
    console.log(
      "FIGURE tokens turns",
      used.length,
      "sum",
      used.reduce((a, b) => a + b, 0),
    );
    expect(used.length).toBeGreaterThan(0);
    // The documented bound: the budget plus what turns used beyond their reservation. Each turn
    // here reserved min(its request's bytes + max_output_tokens, the budget) ≥ 100 > what it used.
    for (const tokens of used) expect(tokens).toBeLessThan(limit);
    expect(used.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(limit);
    // The ledger agrees, once every session reported.
    await expect
      .poll(
        async () => {
          const res = await workerFetch("/v1/usage", { headers: { authorization: `Bearer ${key}` } });
          const { data } = (await res.json()) as { data: { turns: number }[] };
          return data.reduce((n, b) => n + b.turns, 0);
        },
        { timeout: 15_000 },
      )
      .toBe(used.length);
    const res = await workerFetch("/v1/usage", { headers: { authorization: `Bearer ${key}` } });
    const { data } = (await res.json()) as { data: { input_tokens: number; output_tokens: number }[] };
    expect(data.reduce((n, b) => n + b.input_tokens + b.output_tokens, 0)).toBeLessThanOrEqual(limit);
  });

  it("request_bytes_per_minute: 100 concurrent HTTP creates across fresh sessions admit its bytes, at most", async () => {
    await awayFromMinuteEnd();
    const limit = 2_000;
    const { key } = await tenantWithKey("burst-bytes", { request_bytes_per_minute: limit });
    const first = minuteOf(Date.now());
    const bodies = Array.from({ length: 100 }, (_, i) => ({
      model: MODEL,
      input: `bytes ${String(i).padStart(3, "0")} ${"b".repeat(150)} [sim:tokens=3]`,
    }));
    const responses = await Promise.all(bodies.map((body) => post(key, body)));
    const minutes = minuteOf(Date.now()) - first + 1;
    const statuses = responses.map((r) => r.status);
    await Promise.all(responses.map((r) => r.body?.cancel()));
    // Each body is ASCII: its length is its size in bytes, as the Worker measures it.
    const admittedBytes = bodies
      .filter((_, i) => statuses[i] === 200)
      .reduce((n, body) => n + JSON.stringify(body).length, 0);
    console.log(
      "FIGURE bytes admitted",
      statuses.filter((s) => s === 200).length,
      "of 100, bytes",
      admittedBytes,
      "limit",
      limit,
    );
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    expect(admittedBytes).toBeGreaterThan(0);
    expect(admittedBytes).toBeLessThanOrEqual(limit * minutes);
  });

  it("turns_per_minute: 10 of 50 concurrent compacts across fresh sessions, at most", async () => {
    await awayFromMinuteEnd();
    const { key } = await tenantWithKey("burst-compact", { turns_per_minute: 10 });
    const first = minuteOf(Date.now());
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        post(
          key,
          { model: MODEL, input: `compact ${i} [sim:tokens=3]` },
          uniqueSession("burst-compact"),
          "/v1/responses/compact",
        ),
      ),
    );
    const minutes = minuteOf(Date.now()) - first + 1;
    const statuses = responses.map((r) => r.status);
    await Promise.all(responses.map((r) => r.body?.cancel()));
    const admitted = statuses.filter((s) => s === 200).length;
    console.log("FIGURE compacts admitted", admitted, "of 50");
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    expect(admitted).toBeGreaterThan(0);
    expect(admitted).toBeLessThanOrEqual(10 * minutes);
  });

  it("input_tokens draws on turns_per_minute like any call (none of tokens_per_day)", async () => {
    await awayFromMinuteEnd();
    const { key } = await tenantWithKey("count-rpm", { turns_per_minute: 2, tokens_per_day: 1 });
    const session = uniqueSession("count-rpm");
    const count = () =>
      post(key, { model: MODEL, input: "how long?" }, session, "/v1/responses/input_tokens");
    // Counting generates nothing: a day budget of one token leaves it alone …
    expect((await count()).status).toBe(200);
    expect((await count()).status).toBe(200);
    // … but each was a call of the minute: the third call is over the limit.
    const third = await post(key, { model: MODEL, input: "and now a turn" }, session);
    expect(third.status).toBe(429);
    expect(((await third.json()) as { error: { type: string } }).error.type).toBe("requests");
  });

  it("tokens_per_day: a continuation reserves the history it resends", async () => {
    const input = `${"word ".repeat(2_000)}[sim:tokens=3]`;
    const body = { model: MODEL, input, max_output_tokens: 16 };
    // What the first turn uses, measured on a tenant without limits (the simulator's count).
    const free = await tenantWithKey("history-free");
    const measured = await post(free.key, body);
    const used = ((await measured.json()) as { usage: { total_tokens: number } }).usage.total_tokens;
    // A budget of 1.5 turns: what is left after the first covers a short request, not its history.
    const { key } = await tenantWithKey("history", { tokens_per_day: Math.floor(used * 1.5) });
    const session = uniqueSession("history");
    const first = await post(key, body, session);
    expect(first.status).toBe(200);
    const { id, usage } = (await first.json()) as { id: string; usage: { total_tokens: number } };
    expect(usage.total_tokens).toBe(used);
    const next = await post(
      key,
      { model: MODEL, input: "and then? [sim:tokens=3]", previous_response_id: id, max_output_tokens: 16 },
      session,
    );
    expect(next.status).toBe(429);
    expect(((await next.json()) as { error: { type: string } }).error.type).toBe("tokens");
  });

  it("a warm turn admits out of its lease: no wait, no call", async () => {
    const { key, tenant } = await tenantWithKey("warm-lease", {
      turns_per_minute: 1_000,
      request_bytes_per_minute: 10_000_000,
      tokens_per_day: 10_000_000,
    });
    const session = uniqueSession("warm-lease");
    const ws = await connect({ key, session });
    ws.send({ type: "response.create", model: MODEL, input: "first [sim:tokens=3]" });
    expect((await ws.turn(0)).at(-1)?.type).toBe("response.completed");
    const stub = sessionStub(tenant, session);
    // The sync after a turn renews the lease by the session's pace (here: one turn).
    await runInDurableObject(stub, (instance) => gateOf(instance).flush());
    const waits = await runInDurableObject(stub, (instance) => gateOf(instance).waits);
    ws.send({ type: "response.create", model: MODEL, input: "warm [sim:tokens=3]" });
    expect((await ws.turn(1)).at(-1)?.type).toBe("response.completed");
    expect(await runInDurableObject(stub, (instance) => gateOf(instance).waits)).toBe(waits);
    // The verdict itself: synchronous, with no call, while the lease in hand covers the turn.
    await runInDurableObject(stub, (instance) => gateOf(instance).flush());
    const direct = await runInDurableObject(stub, (instance) => {
      const gate = gateOf(instance);
      const syncs = gate.syncs;
      const verdict = gate.admit(MODEL, 10, () => 10);
      const sync = !(verdict instanceof Promise);
      if (sync && "reservation" in verdict) gate.release(verdict.reservation ?? undefined);
      return { sync, calls: gate.syncs - syncs };
    });
    expect(direct).toEqual({ sync: true, calls: 0 });
    ws.close();
  });

  it("a create waiting for the tenant keeps its place: the socket's next creates run after it", async () => {
    const { key, tenant } = await tenantWithKey("order", { request_bytes_per_minute: 1_000_000 });
    const session = uniqueSession("order");
    const ws = await connect({ key, session });
    ws.send({ type: "response.create", model: MODEL, input: `${"y".repeat(300)} [sim:tokens=3]` });
    expect((await ws.turn(0)).at(-1)?.type).toBe("response.completed");
    const stub = sessionStub(tenant, session);
    await runInDurableObject(stub, (instance) => gateOf(instance).flush()); // a lease of about that turn's bytes
    const waits = await runInDurableObject(stub, (instance) => gateOf(instance).waits);
    // A create larger than the lease (it waits for the tenant), then a small one the lease covers.
    ws.send({
      type: "response.create",
      model: MODEL,
      input: `${"x".repeat(5_000)} [sim:tokens=3]`,
      metadata: { n: "1" },
    });
    ws.send({ type: "response.create", model: MODEL, input: "small [sim:tokens=3]", metadata: { n: "2" } });
    await ws.until((frames) => frames.filter((f) => f.type === "response.completed").length === 3);
    const created = ws.frames
      .filter((f) => f.type === "response.created")
      .map((f) => (f as unknown as { response: { metadata?: { n?: string } } }).response.metadata?.n);
    expect(created.slice(1)).toEqual(["1", "2"]);
    expect(await runInDurableObject(stub, (instance) => gateOf(instance).waits)).toBeGreaterThan(waits);
    ws.close();
  });

  it("fails closed when the tenant cannot be asked, and a lease in hand still admits", async () => {
    const { key, tenant } = await tenantWithKey("unreachable", { turns_per_minute: 1_000 });
    const session = uniqueSession("unreachable");
    expect((await post(key, { model: MODEL, input: "cold [sim:tokens=3]" }, session)).status).toBe(200);
    const stub = sessionStub(tenant, session);
    // The sync after the turn renews the lease by the session's pace (one turn).
    await runInDurableObject(stub, (instance) => gateOf(instance).flush());
    // The tenant's Durable Object is unreachable from this session from now on.
    await runInDurableObject(stub, (instance) => {
      const deps = (gateOf(instance) as unknown as { deps: { tenants: unknown; real?: unknown } }).deps;
      deps.real = deps.tenants;
      deps.tenants = {
        getByName: () => ({
          sync: () => Promise.reject(new Error("tenant unreachable")),
          closeSocket: () => Promise.resolve(),
        }),
      };
    });
    // The lease it holds covers the next turn: admitted without the tenant.
    expect((await post(key, { model: MODEL, input: "warm [sim:tokens=3]" }, session)).status).toBe(200);
    // The lease gone (expired), the next turn must ask: 503, not an admission nobody counted.
    await runInDurableObject(stub, (instance) => {
      (gateOf(instance) as unknown as { lease: { expiresAt: number } }).lease.expiresAt = 0;
    });
    const refused = await post(key, { model: MODEL, input: "cold again" }, session);
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe(
      "tenant_limits_unavailable",
    );
    // Reachable again: admitted.
    await runInDurableObject(stub, (instance) => {
      const deps = (gateOf(instance) as unknown as { deps: { tenants: unknown; real?: unknown } }).deps;
      deps.tenants = deps.real;
    });
    expect((await post(key, { model: MODEL, input: "back [sim:tokens=3]" }, session)).status).toBe(200);
  });
});
