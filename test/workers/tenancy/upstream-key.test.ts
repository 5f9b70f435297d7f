/**
 * A tenant's own upstream key (issue #19 §1, src/tenancy/tenant-upstream-key.ts): a tenant that
 * brought one has its turns sent to the deployment's default upstream with it — HTTP
 * `Authorization` and the upstream WebSocket's — while routes to other base URLs keep their own;
 * a tenant without one uses the deployment's key; a removal or a change reaches an open session
 * within the bound (30 s), closing the warm upstream socket opened with the old key; a warm turn
 * makes no control-plane query; the key is never stored in clear, shown or logged.
 * The simulator records a fingerprint of each request's bearer key (simulator/recorder.ts).
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, inject, it, vi } from "vitest";
import { parseConfig } from "../../../src/config/config.ts";
import { attachmentOf } from "../../../src/session/connection.ts";
import { SessionTenancy } from "../../../src/tenancy/session-tenancy.ts";
import type { TenancyEnv } from "../../../src/tenancy/tenancy-env.ts";
import { UPSTREAM_KEY_TTL_MS } from "../../../src/tenancy/tenant-upstream-key.ts";
import { admin, tenantWithKey } from "../../support/admin.ts";
import { sessionStub } from "../../support/session-stub.ts";
import { testId } from "../../support/test-id.ts";
import {
  connect,
  simulatorRequests,
  type TestSocket,
  uniqueSession,
  workerFetch,
} from "../../support/ws-client.ts";

/** The deployment's key (vitest.config.ts `UPSTREAM_API_KEY`). */
const DEPLOYMENT_KEY = "sim-test-key";

/** The simulator's fingerprint of a bearer key (simulator/recorder.ts `keyFingerprint`). */
async function fingerprint(key: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)));
  return [...digest]
    .map((byte) => byte.toString(16).padStart(2, "0"))
    .join("")
    .slice(0, 16);
}

/** A key of no known shape: only redaction by value can catch it. */
function ownKey(): string {
  return `tenantOwn${testId().replaceAll("-", "")}Key`;
}

async function setUpstreamKey(tenant: string, key: string | null): Promise<void> {
  const changed = await admin(`/tenants/${tenant}`, { method: "PATCH", body: { upstream_api_key: key } });
  expect(changed.status).toBe(200);
  const text = await changed.text();
  if (key) expect(text).not.toContain(key);
  expect((JSON.parse(text) as { own_upstream_key: boolean }).own_upstream_key).toBe(key !== null);
}

function post(key: string, body: Record<string, unknown>): Promise<Response> {
  return workerFetch("/v1/responses", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** The fingerprints (and upstream connections) the simulator recorded for requests containing `marker`. */
async function seenBy(marker: string, simulatorUrl = inject("simulatorUrl")) {
  const records = await simulatorRequests(simulatorUrl, marker);
  return records.map((r) => ({ key: r.keyFingerprint, connection: r.connectionId }));
}

async function wsTurn(ws: TestSocket, n: number, model: string, input: string): Promise<void> {
  ws.send({ type: "response.create", model, input: `${input} [sim:tokens=3]` });
  expect((await ws.turn(n)).at(-1)?.type).toBe("response.completed");
}

/** Moves the session's clock for its tenant key (the bound) by `ms`. */
async function advanceKeyClock(tenant: string, session: string, ms: number): Promise<void> {
  await runInDurableObject(sessionStub(tenant, session), (instance) => {
    const key = (instance as unknown as { parts: { tenancy: { upstreamKey: { now: () => number } } } }).parts
      .tenancy.upstreamKey;
    key.now = () => Date.now() + ms;
  });
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a tenant's own upstream key", () => {
  it("HTTP: the tenant's key on the default upstream, the route's own elsewhere; none → the deployment's", async () => {
    const own = await tenantWithKey("byok-http");
    const plain = await tenantWithKey("plain-http");
    const key = ownKey();
    await setUpstreamKey(own.tenant, key);
    const marker = `byok-${testId()}`;
    for (const [who, tag] of [
      [own.key, "own"],
      [plain.key, "plain"],
    ] as const) {
      const answer = await post(who, { model: "deltagate-sim", input: `${marker} ${tag} [sim:tokens=3]` });
      expect(answer.status).toBe(200);
    }
    expect(await seenBy(`${marker} own`)).toEqual([{ key: await fingerprint(key), connection: null }]);
    expect(await seenBy(`${marker} plain`)).toEqual([
      { key: await fingerprint(DEPLOYMENT_KEY), connection: null },
    ]);
    // A route to another base URL (no key of its own) never gets the tenant's key.
    const elsewhere = await post(own.key, { model: "sim-large", input: `${marker} large [sim:tokens=3]` });
    expect(elsewhere.status).toBe(200);
    expect(await seenBy(`${marker} large`, inject("largeSimulatorUrl"))).toEqual([
      { key: null, connection: null },
    ]);
  });

  it("WebSocket: the upstream socket opens with the tenant's key; a removal reaches it within the bound", async () => {
    const { tenant, key: tenantKey } = await tenantWithKey("byok-ws");
    const key = ownKey();
    await setUpstreamKey(tenant, key);
    const session = uniqueSession("byok-ws");
    const marker = `byok-ws-${testId()}`;
    const ws = await connect({ key: tenantKey, session });
    await wsTurn(ws, 0, "sim-ws", `${marker} one`);
    const [first] = await seenBy(`${marker} one`);
    expect(first?.key).toBe(await fingerprint(key));
    // Warm: the key is confirmed (the upgrade read it), so the next turn awaits no control-plane
    // query, and it stays on the same upstream socket.
    const warm = await runInDurableObject(sessionStub(tenant, session), (instance) => {
      const parts = (instance as unknown as { parts: { tenancy: { upstreamKey: { ready(): unknown } } } })
        .parts;
      return parts.tenancy.upstreamKey.ready() === null;
    });
    expect(warm).toBe(true);
    await wsTurn(ws, 1, "sim-ws", `${marker} two`);
    const [second] = await seenBy(`${marker} two`);
    expect(second).toEqual(first);
    // Removed: inside the bound the session may still use it; past it, never — a new upstream
    // socket with the deployment's key, and the old one closed.
    await setUpstreamKey(tenant, null);
    await advanceKeyClock(tenant, session, UPSTREAM_KEY_TTL_MS + 1);
    await wsTurn(ws, 2, "sim-ws", `${marker} three`);
    const [third] = await seenBy(`${marker} three`);
    expect(third?.key).toBe(await fingerprint(DEPLOYMENT_KEY));
    expect(third?.connection).not.toBe(first?.connection);
    await expect
      .poll(
        async () => {
          const res = await fetch(`${inject("simulatorUrl")}/_sim/ws-connections`);
          const all = ((await res.json()) as { data: { id: number; closing: boolean }[] }).data;
          // Deltagate's close frame reached the simulator (the TCP close may follow much later:
          // simulator/ws-connections.ts `closing`).
          return all.find((c) => c.id === first?.connection)?.closing ?? false;
          // A bound, not a speed claim, generous because this file runs beside other workerd
          // files on 2 cores.
        },
        { timeout: 15_000 },
      )
      .toBe(true);
    ws.close();
  });

  it("a change of key reaches an open session within the bound", async () => {
    const { tenant, key: tenantKey } = await tenantWithKey("byok-rotate");
    const [oldKey, newKey] = [ownKey(), ownKey()];
    await setUpstreamKey(tenant, oldKey);
    const session = uniqueSession("byok-rotate");
    const marker = `byok-rot-${testId()}`;
    const ws = await connect({ key: tenantKey, session });
    await wsTurn(ws, 0, "sim-ws", `${marker} one`);
    expect((await seenBy(`${marker} one`))[0]?.key).toBe(await fingerprint(oldKey));
    await setUpstreamKey(tenant, newKey);
    await advanceKeyClock(tenant, session, UPSTREAM_KEY_TTL_MS + 1);
    await wsTurn(ws, 1, "sim-ws", `${marker} two`);
    expect((await seenBy(`${marker} two`))[0]?.key).toBe(await fingerprint(newKey));
    ws.close();
  });

  it("a session woken from hibernation reads the key again before its next turn", async () => {
    const { tenant, key: tenantKey } = await tenantWithKey("byok-wake");
    await setUpstreamKey(tenant, ownKey());
    const session = uniqueSession("byok-wake");
    const ws = await connect({ key: tenantKey, session });
    await wsTurn(ws, 0, "sim-ws", "hello");
    // What a new instance of the session (after hibernation) builds from the sockets' attachments:
    // the key is not in memory any more, and the socket remembers that the tenant had one.
    const woken = await runInDurableObject(sessionStub(tenant, session), (instance, state) => {
      const { env: objectEnv } = instance as unknown as { env: TenancyEnv };
      const sockets = () =>
        state.getWebSockets().map((socket) => ({ ws: socket, attachment: attachmentOf(socket) }));
      const attachments = sockets().map(({ attachment }) => attachment?.ownUpstreamKey);
      const fresh = new SessionTenancy({
        ctx: state,
        env: objectEnv,
        config: parseConfig(objectEnv),
        tenant: () => tenant,
        sockets,
      });
      return { attachments, mustRead: fresh.upstreamKey.ready() !== null };
    });
    expect(woken).toEqual({ attachments: [true], mustRead: true });
    ws.close();
  });

  it("is never stored in clear, shown or logged", async () => {
    const logged: string[] = [];
    for (const level of ["log", "warn", "error", "info", "debug"] as const) {
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
        logged.push(args.map((a) => (a instanceof Error ? `${a.message} ${a.stack}` : String(a))).join(" "));
      });
    }
    const { tenant, key: tenantKey } = await tenantWithKey("byok-secret");
    const key = ownKey();
    await setUpstreamKey(tenant, key);
    const session = uniqueSession("byok-secret");
    const ws = await connect({ key: tenantKey, session });
    await wsTurn(ws, 0, "sim-ws", "hello");
    ws.send("{not json");
    await ws.until((frames) => frames.some((f) => f.type === "error"));
    ws.close();
    const shown = [
      await (await admin(`/tenants/${tenant}`)).text(),
      await (await admin("/tenants")).text(),
      JSON.stringify(ws.frames),
    ];
    const sessionRows = await runInDurableObject(sessionStub(tenant, session), (instance, state) => {
      const sql = state.storage.sql;
      const tables = sql
        .exec<{ name: string }>(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%'",
        )
        .toArray();
      const rows = tables.map(({ name }) => JSON.stringify(sql.exec(`SELECT * FROM "${name}"`).toArray()));
      // Any error or log line the session renders goes through its redactor, which knows the key.
      const redactor = (instance as unknown as { config: { redactor: { text(t: string): string } } }).config
        .redactor;
      return { rows, redacted: redactor.text(`Incorrect API key provided: ${key}.`) };
    });
    expect(sessionRows.redacted).toBe("Incorrect API key provided: [redacted].");
    const tenantRows = await runInDurableObject(env.TENANTS!.getByName(tenant), (_instance, state) =>
      JSON.stringify(state.storage.sql.exec("SELECT * FROM tenant").toArray()),
    );
    expect(tenantRows).toContain("v1."); // sealed
    for (const text of [...shown, ...sessionRows.rows, tenantRows, ...logged])
      expect(text).not.toContain(key);
  });
});
