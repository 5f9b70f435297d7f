/**
 * State that outlives memory (issue #2 §3–5): a store:true chain continues after the Durable
 * Object is evicted (on the same hibernated socket and on a new one); store:false state survives
 * hibernation of its live socket; the 60-minute connection limit closes a socket through the
 * alarm; upstream failures before and during a stream; a closing client aborts its upstream.
 */
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { countRows, sessionStub } from "../support/session-stub.ts";
import { testId } from "../support/test-id.ts";
import {
  connect,
  type Frame,
  outputText,
  simulatorRequests,
  uniqueSession,
  validateWithSdk,
} from "../support/ws-client.ts";

const MODEL = "deltagate-sim";
const idOf = (frames: Frame[]) => (frames.at(-1) as unknown as { response: { id: string } }).response.id;

describe("durability", () => {
  it("continues a store:true chain after the Durable Object is evicted", async () => {
    const simulatorUrl = inject("simulatorUrl");
    const marker = `evict-${testId()}`;
    const session = uniqueSession("evict");
    const ws = await connect({ session });
    ws.send({ type: "response.create", model: MODEL, input: `${marker} one` });
    const first = idOf(await ws.turn(0));
    await evictDurableObject(sessionStub("tenant-a", session));
    // Same (hibernated) socket, fresh instance.
    ws.send({ type: "response.create", model: MODEL, previous_response_id: first, input: "two" });
    const second = idOf(await ws.turn(1));
    ws.close();
    await evictDurableObject(sessionStub("tenant-a", session));
    // A new socket on the same session continues the stored chain.
    const again = await connect({ session });
    again.send({ type: "response.create", model: MODEL, previous_response_id: second, input: "three" });
    const third = await again.turn(0);
    expect(third.at(-1)?.type).toBe("response.completed");
    const recorded = await simulatorRequests(simulatorUrl, marker);
    expect(recorded.map((r) => r.contextItemCount)).toEqual([1, 3, 5]);
    again.close();
  });

  it("keeps store:false state across hibernation of the live socket that owns it", async () => {
    const session = uniqueSession("hibernate");
    const ws = await connect({ session });
    ws.send({ type: "response.create", model: MODEL, store: false, input: "private" });
    const first = idOf(await ws.turn(0));
    await evictDurableObject(sessionStub("tenant-a", session));
    ws.send({
      type: "response.create",
      model: MODEL,
      store: false,
      previous_response_id: first,
      input: "next",
    });
    expect((await ws.turn(1)).at(-1)?.type).toBe("response.completed");
    ws.close();
  });

  it("closes a socket at the connection lifetime with websocket_connection_limit_reached", async () => {
    const session = uniqueSession("lifetime");
    const ws = await connect({ session });
    const stub = sessionStub("tenant-a", session);
    // Age the socket by 60 minutes, as its attachment records it, then let the alarm run.
    await runInDurableObject(stub, (_instance, state) => {
      for (const socket of state.getWebSockets()) {
        const attachment = socket.deserializeAttachment() as { openedAt: number };
        socket.serializeAttachment({ ...attachment, openedAt: attachment.openedAt - 60 * 60 * 1000 });
      }
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const closed = await ws.closed();
    expect(closed.code).toBe(1000);
    expect(ws.frames.at(-1)).toMatchObject({
      type: "error",
      status: 400,
      error: {
        code: "websocket_connection_limit_reached",
        message:
          "Responses websocket connection limit reached (60 minutes). Create a new websocket connection to continue.",
      },
    });
  });

  it("reports an upstream failure before the first event as response.failed, stored as failed", async () => {
    const session = uniqueSession("fail-before");
    const ws = await connect({ session });
    ws.send({ type: "response.create", model: MODEL, input: "boom [sim:fail=before]" });
    const frames = await ws.turn(0);
    expect(frames.map((f) => f.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.failed",
    ]);
    expect(frames.at(-1)).toMatchObject({ response: { status: "failed", error: { code: "server_error" } } });
    expect(await countRows("tenant-a", session, "responses", "status = 'failed'")).toBe(1);
    ws.close();
  });

  it("reports an upstream failure mid-stream as response.failed, stored as failed", async () => {
    const session = uniqueSession("fail-mid");
    const ws = await connect({ session });
    ws.send({ type: "response.create", model: MODEL, input: "boom [sim:fail=midstream] [sim:tokens=80]" });
    const frames = await ws.turn(0);
    expect(frames[0]?.type).toBe("response.created");
    const failed = frames.at(-1) as unknown as {
      type: string;
      response: { id: string; status: string; error: { code: string } };
    };
    expect(failed.type).toBe("response.failed");
    expect(failed.response.status).toBe("failed");
    // The upstream's body broke off: an upstream failure (src/upstream/error-mapping.ts), not a
    // Deltagate fault (`server_error`).
    expect(failed.response.error.code).toBe("upstream_error");
    expect(frames.map((f) => f.sequence_number)).toEqual(frames.map((_, i) => i));
    expect(
      await countRows("tenant-a", session, "responses", `id = '${failed.response.id}' AND status = 'failed'`),
    ).toBe(1);
    ws.close();
  });

  it("aborts the upstream request when a store:false client closes mid-turn", async () => {
    const simulatorUrl = inject("simulatorUrl");
    const marker = `abort-${testId()}`;
    const session = uniqueSession("abort");
    const ws = await connect({ session });
    ws.send({
      type: "response.create",
      model: MODEL,
      store: false,
      input: `${marker} long [sim:tokens=3000]`,
    });
    await ws.until((f) => f.some((x) => x.type === "response.output_text.delta"));
    ws.close();
    await expect
      .poll(async () => (await simulatorRequests(simulatorUrl, marker))[0]?.aborted, { timeout: 10_000 })
      .toBe(true);
    await expect.poll(() => countRows("tenant-a", session, "responses"), { timeout: 10_000 }).toBe(0);
  });

  it("lets a store:true response finish and be stored after its client closes mid-turn", async () => {
    const simulatorUrl = inject("simulatorUrl");
    const marker = `finish-${testId()}`;
    const session = uniqueSession("finish");
    const ws = await connect({ session });
    ws.send({ type: "response.create", model: MODEL, input: `${marker} medium [sim:tokens=300]` });
    await ws.until((f) => f.some((x) => x.type === "response.output_text.delta"));
    const id = (ws.frames[0] as unknown as { response: { id: string } }).response.id;
    ws.close();
    await expect
      .poll(() => countRows("tenant-a", session, "responses", `id = '${id}' AND status = 'completed'`), {
        timeout: 10_000,
      })
      .toBe(1);
    expect((await simulatorRequests(simulatorUrl, marker))[0]?.aborted).toBe(false);
    // The stored chain continues on a new socket.
    const again = await connect({ session });
    again.send({ type: "response.create", model: MODEL, previous_response_id: id, input: "and then?" });
    const next = await again.turn(0);
    await validateWithSdk(next);
    expect(outputText(next).length).toBeGreaterThan(0);
    again.close();
  });
});
