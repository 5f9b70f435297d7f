/**
 * What a client secret may reach (issue #16 "Must show"): only its own session. A secret for
 * session S cannot read, resume, cancel, delete or continue a response of session T of its own
 * tenant, nor of another tenant — over HTTP or WebSocket, also by naming `previous_response_id`
 * (store:true, or a store:false chain another socket of the tenant could continue). Its model, size
 * and turn bindings are enforced with their 4xx codes; the secret is captured nowhere (logs,
 * errors, stored rows, upstream requests); and a warm turn costs no extra storage work.
 */
import { runInDurableObject } from "cloudflare:test";
import { afterEach, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { accepted, errorOf, mintSecret, upgradeWith } from "../support/client-secrets.ts";
import { recordSql, sessionStub } from "../support/session-stub.ts";
import {
  connect,
  type Frame,
  KEY_A,
  KEY_B,
  simulatorRequests,
  type TestSocket,
  uniqueSession,
  workerFetch,
} from "../support/ws-client.ts";

const MODEL = "deltagate-sim";

/** A store:true HTTP turn; returns the response id. */
async function httpTurn(
  credential: string,
  body: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<Response> {
  return workerFetch("/v1/responses", {
    method: "POST",
    headers: { authorization: `Bearer ${credential}`, "content-type": "application/json", ...headers },
    body: JSON.stringify({ model: MODEL, input: "Say hello", ...body }),
  });
}

async function httpResponseId(credential: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await httpTurn(credential, {}, headers);
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { id: string }).id;
}

/** The `n`-th terminal-or-error frame of the default lane. */
async function wsTurn(ws: TestSocket, n: number, event: Record<string, unknown>): Promise<Frame> {
  ws.send({ type: "response.create", model: MODEL, input: "Say hello", ...event });
  return (await ws.turn(n)).at(-1)!;
}

describe("a client secret reaches only its own session", () => {
  const S = uniqueSession("bound-s");
  const T = uniqueSession("bound-t");
  let secret = "";
  let own = ""; // a response of S, made with the secret
  let sameTenant = ""; // a response of T (tenant-a), made with the tenant key
  let otherTenant = ""; // a response of tenant-b's session named S
  let storeFalseOfT = ""; // a store:false response of a live tenant-a socket on T

  beforeAll(async () => {
    secret = (await mintSecret({ session: { id: S } })).value;
    own = await httpResponseId(secret);
    sameTenant = await httpResponseId(KEY_A, { "session-id": T });
    otherTenant = await httpResponseId(KEY_B, { "session-id": S });
    const tSocket = await connect({ session: T });
    const done = await wsTurn(tSocket, 0, { store: false });
    storeFalseOfT = (done as unknown as { response: { id: string } }).response.id;
    // The socket stays open: a socket of the same tenant could continue its chain (store:false grace).
  });

  const foreign = () => [sameTenant, otherTenant, storeFalseOfT];

  it("over HTTP: read, input items, resume, cancel and delete of another session's response are 404", async () => {
    const auth = { authorization: `Bearer ${secret}` };
    for (const id of foreign()) {
      for (const [method, path] of [
        ["GET", `/v1/responses/${id}`],
        ["GET", `/v1/responses/${id}?stream=true&starting_after=-1`],
        ["GET", `/v1/responses/${id}/input_items`],
        ["POST", `/v1/responses/${id}/cancel`],
        ["DELETE", `/v1/responses/${id}`],
      ] as const) {
        const res = await workerFetch(path, { method, headers: auth });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect((await errorOf(res)).message).toBe(`Response with id '${id}' not found.`);
      }
    }
    // Nothing was deleted: the owner still reads its response.
    const still = await workerFetch(`/v1/responses/${sameTenant}`, {
      headers: { authorization: `Bearer ${KEY_A}` },
    });
    expect(still.status).toBe(200);
    // Its own response: readable.
    expect((await workerFetch(`/v1/responses/${own}`, { headers: auth })).status).toBe(200);
  });

  it("over HTTP: previous_response_id of another session is not found, also with a session header", async () => {
    for (const id of foreign()) {
      for (const headers of [{}, { "session-id": S }]) {
        const res = await httpTurn(secret, { previous_response_id: id, input: "continue" }, headers);
        expect(res.status).toBe(400);
        const error = await errorOf(res);
        expect(error.code).toBe("previous_response_not_found");
        expect(error.param).toBe("previous_response_id");
      }
    }
    const continued = await httpTurn(secret, { previous_response_id: own, input: "continue" });
    expect(continued.status).toBe(200);
  });

  it("over HTTP: input_tokens and compact read no context of another session either", async () => {
    const post = (path: string, body: Record<string, unknown>) =>
      workerFetch(path, {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    for (const id of foreign()) {
      for (const path of ["/v1/responses/input_tokens", "/v1/responses/compact"]) {
        const res = await post(path, { model: MODEL, previous_response_id: id, input: "x" });
        expect(res.status, path).toBe(400);
        expect((await errorOf(res)).code).toBe("previous_response_not_found");
      }
    }
    const ownContext = await post("/v1/responses/input_tokens", {
      model: MODEL,
      previous_response_id: own,
      input: "x",
    });
    expect(ownContext.status).toBe(200);
  });

  it("over WebSocket: continuing or resuming another session's response is refused on the socket", async () => {
    const ws = await accepted(
      await upgradeWith({ protocols: ["responses", `openai-insecure-api-key.${secret}`] }),
    );
    let terminal = 0; // terminal frames of the default lane so far (an `error` counts)
    for (const id of foreign()) {
      const frame = await wsTurn(ws, terminal++, { previous_response_id: id, input: "continue" });
      expect(frame).toMatchObject({
        type: "error",
        status: 400,
        error: { code: "previous_response_not_found" },
      });
      ws.send({ type: "deltagate.response.resume", response_id: id, starting_after: -1 });
      expect((await ws.turn(terminal++)).at(-1)).toMatchObject({ type: "error", status: 404 });
    }
    // The socket stays open and continues its own chain.
    const frame = await wsTurn(ws, terminal, { previous_response_id: own, input: "continue" });
    expect(frame.type).toBe("response.completed");
    ws.close();
  });
});

describe("model, size and turn bindings", () => {
  it("models: another model is 403 client_secret_model_not_allowed (HTTP and WebSocket); /v1/models shows its own", async () => {
    const { value } = await mintSecret({ session: { models: ["sim-chat-only"] } });
    const res = await httpTurn(value);
    expect(res.status).toBe(403);
    expect(await errorOf(res)).toMatchObject({ code: "client_secret_model_not_allowed", param: "model" });
    const ws = await accepted(await upgradeWith({ query: `client_secret=${value}` }));
    expect(await wsTurn(ws, 0, {})).toMatchObject({
      type: "error",
      status: 403,
      error: { code: "client_secret_model_not_allowed" },
    });
    ws.close();
    const models = await workerFetch("/v1/models", { headers: { authorization: `Bearer ${value}` } });
    expect(((await models.json()) as { data: unknown[] }).data).toEqual([]);
    const allowed = (await mintSecret({ session: { models: [MODEL] } })).value;
    expect((await httpTurn(allowed)).status).toBe(200);
  });

  it("max_request_bytes: a larger body or frame is 413 client_secret_request_too_large", async () => {
    const { value } = await mintSecret({ session: { max_request_bytes: 400 } });
    const big = "x".repeat(500);
    const res = await httpTurn(value, { input: big });
    expect(res.status).toBe(413);
    expect((await errorOf(res)).code).toBe("client_secret_request_too_large");
    expect((await httpTurn(value, { input: "small" })).status).toBe(200);
    const ws = await accepted(await upgradeWith({ query: `client_secret=${value}` }));
    expect(await wsTurn(ws, 0, { input: big })).toMatchObject({
      status: 413,
      error: { code: "client_secret_request_too_large" },
    });
    expect((await wsTurn(ws, 1, { input: "small" })).type).toBe("response.completed");
    ws.close();
  });

  it("max_turns: counted across HTTP and sockets, then 403 client_secret_turns_exhausted; a new secret starts again", async () => {
    const { value, session } = await mintSecret({ session: { max_turns: 2 } });
    expect((await httpTurn(value)).status).toBe(200);
    const ws = await accepted(await upgradeWith({ query: `client_secret=${value}` }));
    expect((await wsTurn(ws, 0, {})).type).toBe("response.completed");
    expect(await wsTurn(ws, 1, {})).toMatchObject({
      status: 403,
      error: { code: "client_secret_turns_exhausted" },
    });
    ws.close();
    const again = await accepted(await upgradeWith({ query: `client_secret=${value}` }));
    expect(await wsTurn(again, 0, {})).toMatchObject({ error: { code: "client_secret_turns_exhausted" } });
    again.close();
    const res = await httpTurn(value);
    expect(res.status).toBe(403);
    expect((await errorOf(res)).code).toBe("client_secret_turns_exhausted");
    // The backend mints a new secret for the same session: a new budget.
    const next = (await mintSecret({ session: { id: session.id, max_turns: 1 } })).value;
    expect((await httpTurn(next)).status).toBe(200);
  });
});

describe("the secret is captured nowhere", () => {
  afterEach(() => vi.restoreAllMocks());

  it("not in a log line, an error, a stored row or an upstream request", async () => {
    const logged: string[] = [];
    for (const level of ["log", "info", "warn", "error", "debug"] as const) {
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
        logged.push(args.map((a) => (a instanceof Error ? `${a.message} ${a.stack}` : String(a))).join(" "));
      });
    }
    const session = uniqueSession("captured");
    const { value } = await mintSecret({
      session: { id: session, max_turns: 50, models: [MODEL, "no-route"] },
    });
    const needle = value.slice(3, 40);
    const seen: string[] = [];
    // HTTP: a turn, a stream, a refused model, a refused session, an unknown response.
    for (const res of [
      await httpTurn(value, { input: `marker ${needle.slice(0, 8)}` }),
      await httpTurn(value, { stream: true }),
      await httpTurn(value, { model: "not-bound" }),
      await httpTurn(value, {}, { "session-id": "another" }),
      await workerFetch("/v1/responses/resp_nothing", { headers: { authorization: `Bearer ${value}` } }),
    ]) {
      seen.push(await res.text());
    }
    // WebSocket, by subprotocol: a turn, a bad frame, a model with no route.
    const ws = await accepted(
      await upgradeWith({ protocols: ["responses", `openai-insecure-api-key.${value}`] }),
    );
    await wsTurn(ws, 0, {});
    ws.send("{not json");
    await wsTurn(ws, 2, { model: "no-route" });
    seen.push(JSON.stringify(ws.frames));
    ws.close();
    for (const text of [...seen, ...logged]) expect(text).not.toContain(needle);
    // Every row of every table of the session's Durable Object.
    const rows = await runInDurableObject(sessionStub("tenant-a", session), (_instance, state) => {
      const sql = state.storage.sql;
      const tables = sql
        .exec<{ name: string }>(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%'",
        )
        .toArray();
      return tables.map(({ name }) => JSON.stringify(sql.exec(`SELECT * FROM "${name}"`).toArray()));
    });
    expect(rows.length).toBeGreaterThan(3);
    for (const table of rows) expect(table).not.toContain(needle);
    // What went upstream.
    expect(await simulatorRequests(inject("simulatorUrl"), needle)).toEqual([]);
  });
});

describe("a warm turn authenticated by a client secret costs no extra storage work", () => {
  /** SQL statements the session Durable Object runs during one warm (second) WebSocket turn. */
  async function statementsOfWarmTurn(
    open: (session: string) => Promise<TestSocket>,
    session: string,
  ): Promise<{ statements: string[]; alarms: number }> {
    const ws = await open(session);
    const first = await wsTurn(ws, 0, {});
    const previous = (first as unknown as { response: { id: string } }).response.id;
    const seen = await recordSql("tenant-a", session);
    let alarms = 0;
    await runInDurableObject(sessionStub("tenant-a", session), (_instance, state) => {
      const { storage } = state;
      for (const name of ["getAlarm", "setAlarm", "get", "put"] as const) {
        const original = (storage[name] as (...args: unknown[]) => unknown).bind(storage);
        (storage as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
          alarms++;
          return original(...args);
        };
      }
    });
    const done = await wsTurn(ws, 1, { previous_response_id: previous, input: "again" });
    expect(done.type).toBe("response.completed");
    // Up to the terminal event: what the socket's close does afterwards is not the turn's.
    const statements = [...seen];
    ws.close();
    return { statements, alarms };
  }

  it("the same SQL statements and no storage call more than a tenant key's; max_turns adds its counter only", async () => {
    const byKey = await statementsOfWarmTurn((session) => connect({ session }), uniqueSession("warm-key"));
    const plain = uniqueSession("warm-secret");
    const { value } = await mintSecret({ session: { id: plain } });
    const bySecret = await statementsOfWarmTurn(
      () => upgradeWith({ query: `client_secret=${value}` }).then(accepted),
      plain,
    );
    expect(byKey.statements.length).toBeGreaterThan(0); // the probe sees the turn's own statements
    expect(bySecret).toEqual(byKey);
    const counted = uniqueSession("warm-counted");
    const limited = (await mintSecret({ session: { id: counted, max_turns: 10 } })).value;
    const byLimited = await statementsOfWarmTurn(
      () => upgradeWith({ query: `client_secret=${limited}` }).then(accepted),
      counted,
    );
    expect(byLimited.alarms).toBe(byKey.alarms);
    expect(byLimited.statements.filter((q) => !byKey.statements.includes(q))).toEqual([
      "SELECT value FROM meta WHERE key = ?",
      expect.stringMatching(/^INSERT INTO meta \(key, value\) VALUES/),
    ]);
  });
});

// The binding reaches the Durable Object only from the Worker: a client cannot send it.
describe("the internal binding header", () => {
  it("is stripped from a client's upgrade (a tenant key's socket is not bound by it)", async () => {
    const ws = await accepted(
      await upgradeWith({
        headers: {
          authorization: `Bearer ${KEY_A}`,
          "x-deltagate-client-secret-binding": JSON.stringify({ id: "x", expiresAt: 1, models: ["none"] }),
        },
      }),
    );
    expect((await wsTurn(ws, 0, {})).type).toBe("response.completed");
    ws.close();
  });
});
