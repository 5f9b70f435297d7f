/**
 * Per-tenant limits (issue #19 §4): each limit answers 429 `rate_limit_exceeded` with
 * `retry-after` (HTTP header; `error.headers` of a WebSocket `error` event with `status: 429`),
 * the socket stays open and usable after a refused create, and a connection over the socket limits
 * is refused before its upgrade.
 */
import { describe, expect, it } from "vitest";
import { admin, tenantWithKey } from "../../support/admin.ts";
import { connect, type Frame, uniqueSession, workerFetch } from "../../support/ws-client.ts";

const MODEL = "deltagate-sim";

/** Waits, when the current minute is about to end, for the next one (per-minute windows). */
async function awayFromMinuteEnd(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 50_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinute));
}

function expectRateLimited(frame: Frame | undefined, type: "requests" | "tokens"): void {
  const error = (frame as { status?: number; error?: Record<string, unknown> } | undefined) ?? {};
  expect(error.status).toBe(429);
  expect(error.error?.code).toBe("rate_limit_exceeded");
  expect(error.error?.type).toBe(type);
  const headers = error.error?.headers as Record<string, string> | undefined;
  expect(Number(headers?.["retry-after"])).toBeGreaterThanOrEqual(1);
}

function post(key: string, body: Record<string, unknown>): Promise<Response> {
  return workerFetch("/v1/responses", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function expectHttp429(response: Response, type: "requests" | "tokens"): Promise<void> {
  expect(response.status).toBe(429);
  expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  const { error } = (await response.json()) as { error: { code: string; type: string } };
  expect(error).toMatchObject({ code: "rate_limit_exceeded", type });
}

describe("tenant limits", () => {
  it("turns_per_minute: the next create gets 429 and the socket stays usable", async () => {
    await awayFromMinuteEnd();
    const { key } = await tenantWithKey("rpm", { turns_per_minute: 2 });
    const ws = await connect({ key, session: uniqueSession("rpm") });
    ws.send({ type: "response.create", model: MODEL, input: "one [sim:tokens=3]" });
    const first = await ws.turn(0);
    ws.send({ type: "response.create", model: MODEL, input: "two [sim:tokens=3]" });
    expect((await ws.turn(1)).at(-1)?.type).toBe("response.completed");
    ws.send({ type: "response.create", model: MODEL, input: "three" });
    const refused = await ws.turn(2);
    expectRateLimited(refused[0], "requests");
    // Still open and usable: a resume of the first response replays it.
    const id = (first.at(-1) as unknown as { response: { id: string } }).response.id;
    ws.send({ type: "deltagate.response.resume", response_id: id, starting_after: -1, stream_id: "replay" });
    await ws.until((frames) =>
      frames.some((f) => f.stream_id === "replay" && f.type === "response.completed"),
    );
    expect(ws.closeEvent).toBeNull();
    // The same tenant over HTTP (another session: the tenant-wide count reaches it by the sync).
    await expect
      .poll(async () => (await post(key, { model: MODEL, input: "http" })).status, { timeout: 10_000 })
      .toBe(429);
    await expectHttp429(await post(key, { model: MODEL, input: "http" }), "requests");
    ws.close();
  });

  it("tokens_per_day: a turn after the budget is spent gets 429 (type tokens)", async () => {
    const { key } = await tenantWithKey("tpd", { tokens_per_day: 10 });
    const ws = await connect({ key, session: uniqueSession("tpd") });
    ws.send({ type: "response.create", model: MODEL, input: "spend it [sim:tokens=20]" });
    expect((await ws.turn(0)).at(-1)?.type).toBe("response.completed");
    ws.send({ type: "response.create", model: MODEL, input: "more" });
    const refused = await ws.turn(1);
    expectRateLimited(refused[0], "tokens");
    const retryAfter = Number(
      (refused[0] as unknown as { error: { headers: Record<string, string> } }).error.headers["retry-after"],
    );
    expect(retryAfter).toBeLessThanOrEqual(86_400);
    ws.send({ type: "response.processed" }); // the socket still takes frames
    expect(ws.closeEvent).toBeNull();
    ws.close();
    await expect
      .poll(async () => (await post(key, { model: MODEL, input: "http" })).status, { timeout: 10_000 })
      .toBe(429);
  });

  it("request_bytes_per_minute: a create past the bytes gets 429", async () => {
    await awayFromMinuteEnd();
    const { key } = await tenantWithKey("bytes", { request_bytes_per_minute: 2_000 });
    const ws = await connect({ key, session: uniqueSession("bytes") });
    ws.send({ type: "response.create", model: MODEL, input: "small [sim:tokens=3]" });
    expect((await ws.turn(0)).at(-1)?.type).toBe("response.completed");
    ws.send({ type: "response.create", model: MODEL, input: "x".repeat(3_000) });
    expectRateLimited((await ws.turn(1))[0], "requests");
    ws.send({ type: "response.create", model: MODEL, input: "x".repeat(3_000), stream_id: "other" });
    expectRateLimited((await ws.turn(0, "other"))[0], "requests");
    expect(ws.closeEvent).toBeNull();
    ws.close();
  });

  it("max_sockets: a connection over the limit is refused before the upgrade", async () => {
    const { key } = await tenantWithKey("sockets", { max_sockets: 1 });
    const first = await connect({ key, session: uniqueSession("s1") });
    const over = await workerFetch("/v1/responses", {
      headers: { upgrade: "websocket", authorization: `Bearer ${key}`, "session-id": uniqueSession("s2") },
    });
    await expectHttp429(over, "requests");
    expect(over.webSocket).toBeNull();
    first.close();
    // The lease goes back when the socket closes.
    await expect
      .poll(
        async () => {
          const again = await workerFetch("/v1/responses", {
            headers: {
              upgrade: "websocket",
              authorization: `Bearer ${key}`,
              "session-id": uniqueSession("s3"),
            },
          });
          if (again.status === 101) {
            again.webSocket?.accept();
            again.webSocket?.close(1000);
          }
          return again.status;
        },
        { timeout: 10_000 },
      )
      .toBe(101);
  });

  it("sessions_per_key: a second session of the key is refused, more sockets on the first are not", async () => {
    const { key } = await tenantWithKey("sessions", { sessions_per_key: 1 });
    const session = uniqueSession("one");
    const a = await connect({ key, session });
    const b = await connect({ key, session });
    const other = await workerFetch("/v1/responses", {
      headers: { upgrade: "websocket", authorization: `Bearer ${key}`, "session-id": uniqueSession("two") },
    });
    await expectHttp429(other, "requests");
    a.close();
    b.close();
  });

  it("allowed models: another model is not found for this tenant; an alias is resolved", async () => {
    const { key } = await tenantWithKey(
      "models",
      {},
      { models: [MODEL], model_aliases: { "my-model": MODEL } },
    );
    const refused = await post(key, { model: "sim-chat-x", input: "hi" });
    expect(refused.status).toBe(404);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("model_not_found");
    const aliased = await post(key, { model: "my-model", input: "hi [sim:tokens=3]" });
    expect(aliased.status).toBe(200);
    expect(((await aliased.json()) as { model: string }).model).toBe(MODEL);
  });

  it("a limit set by the admin API reaches a warm session within its sync", async () => {
    await awayFromMinuteEnd();
    const { key, tenant } = await tenantWithKey("later");
    const ws = await connect({ key, session: uniqueSession("later") });
    ws.send({ type: "response.create", model: MODEL, input: "free [sim:tokens=3]" });
    await ws.turn(0);
    const set = await admin(`/tenants/${tenant}`, {
      method: "PATCH",
      body: { limits: { turns_per_minute: 1 } },
    });
    expect(set.status).toBe(200);
    let n = 1;
    await expect
      .poll(
        async () => {
          ws.send({ type: "response.create", model: MODEL, input: "again [sim:tokens=3]" });
          return (await ws.turn(n++))[0]?.type;
        },
        { timeout: 10_000, interval: 300 },
      )
      .toBe("error");
    ws.close();
  });
});
