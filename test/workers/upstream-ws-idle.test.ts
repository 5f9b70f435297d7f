/**
 * Idle close of the warm upstream socket (issue #4 "Must show", third bullet): an open outbound
 * WebSocket (and a pending timer) keeps a Durable Object in memory (platform brief §1 "When a DO
 * can hibernate"), so the adapter closes the socket after the idle time. Route `sim-ws-idle*`
 * has `idle_ms: 400` (vitest.config.ts); `sim-ws*` keeps the default 30 s.
 *
 * Hibernation is observed, not forced: workerd evicts an idle Durable Object about 10 s after its
 * last event, and `runInDurableObject` hands back the live instance, so a different instance
 * after a quiet 13 s means the object left memory by itself. The control case shows that, in this
 * runtime, a session whose upstream socket is still open is NOT evicted in the same time.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { sessionStub } from "../support/session-stub.ts";
import { connect, type TestSocket, uniqueSession, validateWithSdk } from "../support/ws-client.ts";
import { connections, recorded, responseOf } from "./upstream-ws-loop.ts";

/** Longer than workerd's 10 s idle-eviction delay, shorter than the default 30 s upstream idle time. */
const QUIET_MS = 13_000;

async function firstTurn(
  model: string,
  marker: string,
  session: string,
): Promise<{ ws: TestSocket; id: string }> {
  const ws = await connect({ session });
  ws.send({ type: "response.create", model, store: false, input: `${marker} hello [sim:tokens=8]` });
  const frames = await ws.turn(0);
  expect(frames.at(-1)?.type).toBe("response.completed");
  return { ws, id: responseOf(frames).id };
}

/** The instance currently in memory for the session (identity survives between calls). */
function instanceOf(session: string): Promise<unknown> {
  return runInDurableObject(sessionStub("tenant-a", session), (instance) => instance);
}

describe.concurrent("responses-ws upstream idle close", () => {
  it("closes an idle upstream socket with 1000, the session hibernates, and its next turn still succeeds", async () => {
    const simulatorUrl = inject("simulatorUrl");
    const marker = `idle-${crypto.randomUUID()}`;
    const session = uniqueSession("ws-idle");
    const { ws, id } = await firstTurn("sim-ws-idle", marker, session);
    const [first] = await recorded(simulatorUrl, marker);
    await expect
      .poll(async () => (await connections(simulatorUrl, [first?.connectionId ?? 0]))[0]?.closedAt ?? null, {
        timeout: 5_000,
      })
      .not.toBeNull();
    const [closed] = await connections(simulatorUrl, [first?.connectionId ?? 0]);
    expect(closed).toMatchObject({ closeCode: 1000, closeReason: "idle", closedBy: "client" });

    const before = await instanceOf(session);
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
    expect(await instanceOf(session)).not.toBe(before);

    // Same (hibernated) client socket, chained on the store:false response it owns.
    ws.send({
      type: "response.create",
      model: "sim-ws-idle",
      store: false,
      previous_response_id: id,
      input: `${marker} still there? [sim:tokens=8]`,
    });
    const next = await ws.turn(1);
    expect(next.at(-1)?.type).toBe("response.completed");
    await validateWithSdk(next);
    const records = await recorded(simulatorUrl, marker);
    expect(records).toHaveLength(2);
    // The upstream's connection cache went with the socket: the full context is sent again.
    expect(records[1]).toMatchObject({ previousResponseId: null, contextItemCount: 3 });
    expect(records[1]?.body.input).toHaveLength(3);
    expect(records[1]?.connectionId).not.toBe(first?.connectionId);
    ws.close();
  }, 40_000);

  it("control: while the upstream socket is open the session stays in memory", async () => {
    const simulatorUrl = inject("simulatorUrl");
    const marker = `pinned-${crypto.randomUUID()}`;
    const session = uniqueSession("ws-pinned");
    const { ws } = await firstTurn("sim-ws", marker, session);
    const before = await instanceOf(session);
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
    expect(await instanceOf(session)).toBe(before);
    const [first] = await recorded(simulatorUrl, marker);
    const [open] = await connections(simulatorUrl, [first?.connectionId ?? 0]);
    expect(open?.closedAt).toBeNull();
    ws.close();
  }, 40_000);
});
