/**
 * A socket continuing a conversation another session holds (docs/conversations.md "WebSocket",
 * src/session/conversation-relay.ts): its `response.create` frames are relayed to the
 * conversation's session Durable Object, which runs them (its items as the context, appended in
 * order, deltas on its warm upstream socket) and admits and meters them once, under the socket's
 * key; the events come back on the socket's lane as if local. A client secret's socket reaches no
 * other session's conversation, nor does another tenant's socket (404 `error` events, nothing run).
 * A relayed turn is cancelled by its id over HTTP; one whose socket closed runs on (store:true) or
 * is cancelled upstream (store:false), as an HTTP stream whose client left.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import type OpenAI from "openai";
import { describe, expect, inject, it } from "vitest";
import { conversationOwner, responseOwner } from "../../src/util/ids.ts";
import { admin, tenantWithKey } from "../support/admin.ts";
import { mintSecret } from "../support/client-secrets.ts";
import { allItems, recorded, user } from "../support/conversation-helpers.ts";
import { sdkClient } from "../support/sdk-client.ts";
import { testId } from "../support/test-id.ts";
import {
  connect,
  type Frame,
  KEY_A,
  KEY_B,
  simulatorRequests,
  uniqueSession,
  validateWithSdk,
  workerFetch,
} from "../support/ws-client.ts";

/** The user messages' texts of a conversation, oldest first. */
async function userTexts(client: OpenAI, id: string): Promise<string[]> {
  return (await allItems(client, id))
    .filter((i) => i.role === "user")
    .map((i) => (i.content as Array<{ text: string }>)[0]?.text ?? "");
}

/** The terminal event's response of a turn's frames. */
function responseOf(frames: Frame[]): { id: string; status: string; conversation: unknown } {
  return (frames.at(-1) as unknown as { response: { id: string; status: string; conversation: unknown } })
    .response;
}

/** The tenant's usage rows by key (the ledger in its Durable Object), once `turns` are in. */
async function ledger(tenant: string): Promise<Array<{ key_id: string; status: string; turns: number }>> {
  return runInDurableObject(env.TENANTS!.getByName(tenant), (_instance, state) =>
    state.storage.sql
      .exec<{ key_id: string; status: string; turns: number }>(
        "SELECT key_id, status, SUM(turns) AS turns FROM usage GROUP BY key_id, status ORDER BY key_id, status",
      )
      .toArray(),
  );
}

describe("a socket continuing a conversation another session holds", () => {
  it("runs in the conversation's session: context, order, deltas upstream, events as if local", async () => {
    const marker = `conv-relay-${testId()}`;
    const home = uniqueSession("conv-relay-home");
    const client = sdkClient(KEY_A, { "session-id": home });
    const conversation = await client.conversations.create({ items: [user(`${marker} hello`)] });
    // A socket on another session of the same tenant.
    const ws = await connect({ session: uniqueSession("conv-relay-away") });
    ws.send({
      type: "response.create",
      model: "sim-ws",
      input: `${marker} one`,
      conversation: conversation.id,
    });
    const one = await ws.turn(0);
    await validateWithSdk(one);
    expect(one.at(-1)?.type).toBe("response.completed");
    // One response's events, numbered from 0 without a gap, as a local turn's.
    expect(one.map((f) => f.sequence_number)).toEqual(one.map((_, i) => i));
    const first = responseOf(one);
    expect(first.conversation).toEqual({ id: conversation.id });
    // The response lives where the conversation does.
    expect(responseOwner(first.id)).toBe(conversationOwner(conversation.id));

    // A named lane: every event carries its stream_id.
    ws.send({
      type: "response.create",
      model: "sim-ws",
      input: `${marker} two`,
      conversation: conversation.id,
      stream_id: "lane-a",
    });
    const two = await ws.turn(0, "lane-a");
    expect(two.at(-1)?.type).toBe("response.completed");
    expect(two.every((f) => f.stream_id === "lane-a")).toBe(true);
    expect(two.map((f) => f.sequence_number)).toEqual(two.map((_, i) => i));

    // Over HTTP the same conversation goes on after them.
    const three = await client.responses.create({
      model: "sim-ws",
      input: `${marker} three`,
      conversation: conversation.id,
    });
    expect(three.status).toBe("completed");
    expect(await userTexts(client, conversation.id)).toEqual([
      `${marker} hello`,
      `${marker} one`,
      `${marker} two`,
      `${marker} three`,
    ]);
    // The conversation's session sent the first turn in full, then deltas on its warm socket.
    expect((await recorded(marker)).map((r) => r.inputItemCount)).toEqual([2, 1, 1]);
    ws.close();
  });

  it("is admitted and metered once, by the conversation's session, under the socket's key", async () => {
    const marker = `conv-relay-meter-${testId()}`;
    // Two turns a minute: a turn admitted twice (here and there) would leave the second refused.
    const { tenant, key } = await tenantWithKey(
      "conv-relay",
      { turns_per_minute: 2 },
      { models: ["sim-ws"] },
    );
    const minted = await admin(`/tenants/${tenant}/keys`, { body: { name: "socket" } });
    const socketKey = (await minted.json()) as { key: string; key_id: string };
    // Created over HTTP in a fresh session (which has never seen a snapshot of its tenant).
    const conversation = await sdkClient(key).conversations.create({});
    const ws = await connect({ key: socketKey.key, session: uniqueSession("conv-relay-meter") });
    // The tenant's models apply (the conversation's session asked its tenant first).
    ws.send({ type: "response.create", model: "deltagate-sim", input: "x", conversation: conversation.id });
    const [refused] = await ws.turn(0);
    expect(refused).toMatchObject({ type: "error", status: 404, error: { code: "model_not_found" } });
    for (const word of ["one", "two"]) {
      ws.send({
        type: "response.create",
        model: "sim-ws",
        input: `${marker} ${word}`,
        conversation: conversation.id,
      });
    }
    expect((await ws.turn(1)).at(-1)?.type).toBe("response.completed");
    ws.close();
    // Two turns, booked once each, under the socket's key alone.
    await expect
      .poll(() => ledger(tenant), { timeout: 15_000 })
      .toEqual([{ key_id: socketKey.key_id, status: "completed", turns: 2 }]);
    expect((await recorded(marker)).length).toBe(2);
  });

  it("a client secret's socket reaches no other session's conversation (404, nothing run)", async () => {
    const marker = `conv-relay-secret-${testId()}`;
    const elsewhere = await sdkClient(KEY_A).conversations.create({ items: [user("not yours")] });
    const secret = await mintSecret();
    const ws = await connect({ key: secret.value });
    ws.send({ type: "response.create", model: "sim-ws", input: marker, conversation: elsewhere.id });
    const [error] = await ws.turn(0);
    expect(error).toMatchObject({ type: "error", status: 404, error: { param: "conversation" } });
    ws.close();
    expect((await allItems(sdkClient(KEY_A), elsewhere.id)).length).toBe(1);
    expect(await recorded(marker)).toEqual([]);
  });

  it("another tenant's conversation is not found on the socket (404, nothing run)", async () => {
    const marker = `conv-relay-tenant-${testId()}`;
    const theirs = await sdkClient(KEY_A).conversations.create({ items: [user("tenant A's")] });
    const ws = await connect({ key: KEY_B, session: uniqueSession("conv-relay-tenant") });
    ws.send({ type: "response.create", model: "sim-ws", input: marker, conversation: theirs.id });
    const [error] = await ws.turn(0);
    expect(error).toMatchObject({
      type: "error",
      status: 404,
      error: { param: "conversation", message: `Conversation with id '${theirs.id}' not found.` },
    });
    // The socket stays open and usable.
    ws.send({ type: "response.create", model: "deltagate-sim", input: "still here [sim:tokens=2]" });
    expect((await ws.turn(1)).at(-1)?.type).toBe("response.completed");
    ws.close();
    expect((await allItems(sdkClient(KEY_A), theirs.id)).length).toBe(1);
    expect(await recorded(marker)).toEqual([]);
  });

  it("a relayed turn is cancelled by its id over HTTP; the socket hears it end cancelled", async () => {
    const hold = uniqueSession("conv-relay-hold");
    const conversation = await sdkClient(KEY_A).conversations.create({});
    const ws = await connect({ session: uniqueSession("conv-relay-cancel") });
    ws.send({
      type: "response.create",
      model: "deltagate-sim",
      input: `held [sim:hold=${hold}]`,
      conversation: conversation.id,
    });
    await ws.until((frames) => frames.some((f) => f.type === "response.created"));
    const created = ws.frames.find((f) => f.type === "response.created") as unknown as {
      response: { id: string };
    };
    const cancelled = await workerFetch(`/v1/responses/${created.response.id}/cancel`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY_A}` },
    });
    expect(cancelled.status).toBe(200);
    // As a local turn's cancellation (cancel.test.ts): `response.failed` with status "cancelled".
    const ended = await ws.turn(0);
    expect(ended.at(-1)?.type).toBe("response.failed");
    expect(responseOf(ended).status).toBe("cancelled");
    await fetch(`${inject("simulatorUrl")}/_sim/release?hold=${hold}`, { method: "POST" });
    ws.close();
    // A cancelled turn appends nothing.
    expect(await allItems(sdkClient(KEY_A), conversation.id)).toEqual([]);
  });

  it("a store:false turn whose socket closed is cancelled upstream, as an HTTP stream whose client left", async () => {
    const hold = uniqueSession("conv-relay-unstored");
    const marker = `conv-relay-unstored-${testId()}`;
    const client = sdkClient(KEY_A);
    const conversation = await client.conversations.create({});
    const ws = await connect({ session: uniqueSession("conv-relay-unstored") });
    ws.send({
      type: "response.create",
      model: "deltagate-sim",
      store: false,
      input: `${marker} [sim:hold=${hold}]`,
      conversation: conversation.id,
    });
    await ws.until((frames) => frames.some((f) => f.type === "response.created"));
    ws.close();
    await ws.closed();
    // The conversation's session stopped the upstream request (the simulator saw it go away).
    await expect
      .poll(async () => (await simulatorRequests(inject("simulatorUrl"), marker))[0]?.aborted, {
        timeout: 15_000,
      })
      .toBe(true);
    await fetch(`${inject("simulatorUrl")}/_sim/release?hold=${hold}`, { method: "POST" });
    expect(await allItems(client, conversation.id)).toEqual([]); // a cancelled turn appends nothing
  });

  it("a store:true turn whose socket closed runs on in the conversation's session and is appended", async () => {
    const hold = uniqueSession("conv-relay-gone");
    const marker = `conv-relay-gone-${testId()}`;
    const client = sdkClient(KEY_A);
    const conversation = await client.conversations.create({});
    const ws = await connect({ session: uniqueSession("conv-relay-gone") });
    ws.send({
      type: "response.create",
      model: "deltagate-sim",
      input: `${marker} [sim:hold=${hold}]`,
      conversation: conversation.id,
    });
    await ws.until((frames) => frames.some((f) => f.type === "response.created"));
    ws.close();
    await ws.closed();
    await fetch(`${inject("simulatorUrl")}/_sim/release?hold=${hold}`, { method: "POST" });
    await expect
      .poll(async () => (await userTexts(client, conversation.id)).length, { timeout: 15_000 })
      .toBe(1);
    const items = await allItems(client, conversation.id);
    expect(items.length).toBeGreaterThan(1); // its input, then its output
  });
});
