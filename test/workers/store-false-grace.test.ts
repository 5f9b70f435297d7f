/**
 * store:false that survives a dropped socket (issue #8 item 1), now an opt-in (issue #17 item 2):
 * by default store:false is connection-local, as OpenAI's — gone with the socket, never
 * continuable from another one. A socket whose client asked for a grace window on its upgrade
 * (`x-deltagate-store-false-grace: <ms>` or `?store_false_grace_ms=`, capped by
 * `STORE_FALSE_GRACE_MAX_MS`, 5 minutes here too) keeps its chain continuable, within the window,
 * by a new socket of the same session, or of another session of the same tenant (imported, still
 * store:false), even before the old socket's close was noticed; never by another tenant, never
 * over HTTP; and after the window (aged in SQL, then the alarm run) it is gone — except what a
 * newer socket's chain builds on, which lives on with that chain.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import OpenAI from "openai";
import { describe, expect, inject, it } from "vitest";
import { DEFAULT_STORE_FALSE_GRACE_MAX_MS } from "../../src/config/config.ts";
import { sdkClient } from "../support/sdk-client.ts";
import { countRows, sessionStub } from "../support/session-stub.ts";
import { testId } from "../support/test-id.ts";
import {
  connect,
  type Frame,
  KEY_B,
  simulatorRequests,
  type TestSocket,
  uniqueSession,
  workerFetch,
} from "../support/ws-client.ts";

const MODEL = "deltagate-sim";
/** The window these sockets ask for: the cap (`STORE_FALSE_GRACE_MAX_MS`, default 5 minutes). */
const WINDOW_MS = DEFAULT_STORE_FALSE_GRACE_MAX_MS;
/** The opt-in header of a socket that wants its store:false chain to outlive it. */
const GRACE = { "x-deltagate-store-false-grace": String(WINDOW_MS) };
const idOf = (frames: Frame[]) => (frames.at(-1) as unknown as { response: { id: string } }).response.id;

/** Runs one store:false turn on `ws` (its `n`-th) and returns the response id. */
async function privateTurn(ws: TestSocket, n: number, input: string, previous?: string): Promise<string> {
  ws.send({
    type: "response.create",
    model: MODEL,
    store: false,
    input,
    ...(previous ? { previous_response_id: previous } : {}),
  });
  const frames = await ws.turn(n);
  expect(frames.at(-1)?.type).toBe("response.completed");
  return idOf(frames);
}

/** Sends a continuation of `previous` on `ws` and returns its frames. */
async function continueOn(ws: TestSocket, n: number, previous: string, input = "continued") {
  ws.send({ type: "response.create", model: MODEL, store: false, previous_response_id: previous, input });
  return ws.turn(n);
}

/** Released scopes of a session (rows of `released_scopes`). */
function releasedScopes(session: string): Promise<number> {
  return runInDurableObject(
    sessionStub("tenant-a", session),
    (_instance, state) =>
      state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM released_scopes").one().n,
  );
}

/** Closes `ws` and waits until its session released the socket's scope. */
async function dropSocket(ws: TestSocket, session: string, released = 1): Promise<void> {
  ws.close();
  await expect.poll(() => releasedScopes(session), { timeout: 10_000 }).toBe(released);
}

/** Moves every release of a session past the grace window, then runs the session's alarm. */
async function endWindow(session: string): Promise<void> {
  const stub = sessionStub("tenant-a", session);
  await runInDurableObject(stub, (_instance, state) => {
    state.storage.sql.exec("UPDATE released_scopes SET released_at = released_at - ?", WINDOW_MS + 1_000);
  });
  expect(await runDurableObjectAlarm(stub)).toBe(true);
}

describe("store:false without a grace window (the default, as OpenAI)", () => {
  it("is gone with its socket: a reconnect gets previous_response_not_found, nothing stays", async () => {
    const session = uniqueSession("grace-none");
    const first = await connect({ session });
    const id = await privateTurn(first, 0, "connection-local");
    // Another socket of the tenant cannot continue it, even while its socket is open.
    const other = await connect({ session });
    const [early] = await continueOn(other, 0, id, "not mine");
    expect(early).toMatchObject({ type: "error", error: { code: "previous_response_not_found" } });
    first.close();
    await expect
      .poll(() => countRows("tenant-a", session, "responses", "store = 0"), { timeout: 10_000 })
      .toBe(0);
    expect(await releasedScopes(session)).toBe(0);
    for (const late of [await connect({ session }), await connect({ session, headers: GRACE })]) {
      const [error] = await continueOn(late, 0, id, "after the reconnect");
      expect(error).toMatchObject({
        type: "error",
        status: 400,
        error: { code: "previous_response_not_found", param: "previous_response_id" },
      });
      late.close();
    }
    other.close();
  });
});

describe("the grace window opt-in", () => {
  /** The window a socket got, as the upgrade's answer says. */
  async function windowOf(path: string, headers: Record<string, string>): Promise<string | null> {
    const res = await workerFetch(path, {
      headers: { upgrade: "websocket", authorization: "Bearer dg-test-a", ...headers },
    });
    expect(res.status).toBe(101);
    const ws = res.webSocket!;
    ws.accept();
    ws.close();
    return res.headers.get("x-deltagate-store-false-grace");
  }

  it("answers the upgrade with the window the socket got: 0 by default, the ask, at most the cap", async () => {
    expect(await windowOf("/v1/responses", {})).toBe("0");
    expect(await windowOf("/v1/responses", { "x-deltagate-store-false-grace": "60000" })).toBe("60000");
    expect(await windowOf("/v1/responses?store_false_grace_ms=1500", {})).toBe("1500");
    expect(await windowOf("/v1/responses", { "x-deltagate-store-false-grace": "86400000" })).toBe(
      String(WINDOW_MS),
    );
  });

  it("refuses a malformed window with a 400 naming the header", async () => {
    for (const bad of ["soon", "-1", "1e6", ""]) {
      const res = await workerFetch("/v1/responses", {
        headers: {
          upgrade: "websocket",
          authorization: "Bearer dg-test-a",
          "x-deltagate-store-false-grace": bad,
        },
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        error: {
          type: "invalid_request_error",
          code: "invalid_value",
          param: "x-deltagate-store-false-grace",
        },
      });
    }
  });
});

describe("store:false grace window (opted in)", () => {
  it("continues on a new socket of the same session after the socket dropped, with its whole context", async () => {
    const simulatorUrl = inject("simulatorUrl");
    const marker = `grace-same-${testId()}`;
    const session = uniqueSession("grace-same");
    const first = await connect({ session, headers: GRACE });
    const id = await privateTurn(first, 0, `${marker} one`);
    await dropSocket(first, session);

    const second = await connect({ session, headers: GRACE });
    const frames = await continueOn(second, 0, id, "two");
    expect(frames.at(-1)?.type).toBe("response.completed");
    const recorded = await simulatorRequests(simulatorUrl, marker);
    expect(recorded.map((r) => r.contextItemCount)).toEqual([1, 3]);
    second.close();
  });

  it("continues from a socket of another session of the same tenant, and stays store:false there", async () => {
    const simulatorUrl = inject("simulatorUrl");
    const marker = `grace-other-${testId()}`;
    const origin = uniqueSession("grace-origin");
    const first = await connect({ session: origin, headers: GRACE });
    const id = await privateTurn(first, 0, `${marker} one`);
    await dropSocket(first, origin);

    const elsewhere = uniqueSession("grace-elsewhere");
    const second = await connect({ session: elsewhere, headers: GRACE });
    const frames = await continueOn(second, 0, id, "two");
    expect(frames.at(-1)?.type).toBe("response.completed");
    const next = idOf(frames);
    expect((await simulatorRequests(simulatorUrl, marker)).map((r) => r.contextItemCount)).toEqual([1, 3]);
    // The imported copy and the new response are both store:false, owned by the new socket.
    expect(await countRows("tenant-a", elsewhere, "responses", "store = 1")).toBe(0);
    expect(await countRows("tenant-a", elsewhere, "responses", "store = 0 AND conn_id LIKE 'conn_%'")).toBe(
      2,
    );

    // Never over HTTP: not readable, not listable, not continuable.
    const client = sdkClient();
    for (const each of [id, next]) {
      await expect(client.responses.retrieve(each)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      await expect(client.responses.inputItems.list(each)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      const error = await client.responses
        .create({ model: MODEL, input: "over http", previous_response_id: each })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).code).toBe("previous_response_not_found");
    }
    second.close();
  });

  it("lets another socket of the tenant continue while the owner's close is not noticed yet", async () => {
    const owner = await connect({ session: uniqueSession("grace-open-owner"), headers: GRACE });
    const id = await privateTurn(owner, 0, "one");
    // A reconnect that lands in another session (no session id) while the owner is still open.
    const reconnected = await connect();
    expect((await continueOn(reconnected, 0, id)).at(-1)?.type).toBe("response.completed");
    const sameSession = await connect({ session: uniqueSession("grace-open-other") });
    expect((await continueOn(sameSession, 0, id)).at(-1)?.type).toBe("response.completed");
    owner.close();
    reconnected.close();
    sameSession.close();
  });

  it("never lets another tenant continue it, in the same session name or through an import", async () => {
    const session = uniqueSession("grace-tenant");
    const first = await connect({ session, headers: GRACE });
    const id = await privateTurn(first, 0, "tenant a only");
    await dropSocket(first, session);
    for (const intruder of [await connect({ session, key: KEY_B }), await connect({ key: KEY_B })]) {
      const [error] = await continueOn(intruder, 0, id, "steal");
      expect(error).toMatchObject({ type: "error", error: { code: "previous_response_not_found" } });
      intruder.close();
    }
    const stream = await workerFetch(`/v1/responses/${id}`, {
      headers: { authorization: "Bearer dg-test-a" },
    });
    expect(stream.status).toBe(404);
  });

  it("is gone for every socket once the window has ended", async () => {
    const session = uniqueSession("grace-expired");
    const first = await connect({ session, headers: GRACE });
    const id = await privateTurn(first, 0, "soon gone");
    await dropSocket(first, session);
    expect(await countRows("tenant-a", session, "responses", "store = 0")).toBe(1);
    await endWindow(session);
    expect(await countRows("tenant-a", session, "responses", "store = 0")).toBe(0);
    expect(await countRows("tenant-a", session, "items")).toBe(0);
    expect(await releasedScopes(session)).toBe(0);
    for (const late of [await connect({ session, headers: GRACE }), await connect()]) {
      const [error] = await continueOn(late, 0, id, "too late");
      expect(error).toMatchObject({ type: "error", error: { code: "previous_response_not_found" } });
      late.close();
    }
  });

  it("purges each closed socket on its own window", async () => {
    const session = uniqueSession("grace-own-window");
    const short = await connect({ session, headers: { "x-deltagate-store-false-grace": "1000" } });
    const long = await connect({ session, headers: GRACE });
    const shortId = await privateTurn(short, 0, "short window");
    const longId = await privateTurn(long, 0, "long window");
    short.close();
    await expect.poll(() => releasedScopes(session), { timeout: 10_000 }).toBe(1);
    long.close();
    await expect.poll(() => releasedScopes(session), { timeout: 10_000 }).toBe(2);
    // Two seconds later: past the short window (1 s), well within the long one (5 minutes).
    const stub = sessionStub("tenant-a", session);
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec("UPDATE released_scopes SET released_at = released_at - 2000");
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await releasedScopes(session)).toBe(1);
    const late = await connect({ session, headers: GRACE });
    const [gone] = await continueOn(late, 0, shortId, "too late");
    expect(gone).toMatchObject({ type: "error", error: { code: "previous_response_not_found" } });
    expect((await continueOn(late, 1, longId, "in time")).at(-1)?.type).toBe("response.completed");
    late.close();
  });

  it("keeps what a newer socket's chain builds on when the old socket's window ends", async () => {
    const simulatorUrl = inject("simulatorUrl");
    const marker = `grace-heir-${testId()}`;
    const session = uniqueSession("grace-heir");
    const first = await connect({ session, headers: GRACE });
    const r1 = await privateTurn(first, 0, `${marker} one`);
    await dropSocket(first, session);
    const second = await connect({ session, headers: GRACE });
    const r2 = idOf(await continueOn(second, 0, r1, "two"));
    await endWindow(session); // the first socket's window ends while the second socket is open
    expect(await countRows("tenant-a", session, "responses", "store = 0")).toBe(2);
    expect(idOf(await continueOn(second, 1, r2, "three"))).toBeTruthy();
    expect((await simulatorRequests(simulatorUrl, marker)).map((r) => r.contextItemCount)).toEqual([1, 3, 5]);
    // When the second socket's window ends too, the whole chain goes.
    await dropSocket(second, session);
    await endWindow(session);
    expect(await countRows("tenant-a", session, "responses")).toBe(0);
  });
});
