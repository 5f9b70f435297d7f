/**
 * The Conversations API (issue #25 item 3; docs/conversations.md), through the real `openai` SDK:
 * a conversation with its items and metadata, paginated listing, item retrieval and deletion, the
 * conversation's deletion; OpenAI's validation (unknown parameter, 20 items, 16 metadata pairs);
 * `responses.create({conversation})` — the conversation's items are the context, the turn's input
 * and output are appended, the Response names the conversation, and its turns go upstream as
 * deltas on the warm upstream WebSocket (the simulator's recorder); two turns at once are
 * serialized; `previous_response_id` with `conversation` is a 400; another tenant's conversation
 * id is not found on any route. A socket of another session continuing a conversation:
 * conversations-relay.test.ts.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { conversationOwner } from "../../src/util/ids.ts";
import { mintSecret } from "../support/client-secrets.ts";
import { allItems, recorded, user } from "../support/conversation-helpers.ts";
import { sdkClient } from "../support/sdk-client.ts";
import { testId } from "../support/test-id.ts";
import { connect, KEY_A, KEY_B, uniqueSession, validateWithSdk, workerFetch } from "../support/ws-client.ts";

/** The session Durable Object a conversation id names. */
function sessionOf(conversationId: string) {
  return env.SESSIONS.get(env.SESSIONS.idFromString(conversationOwner(conversationId) ?? ""));
}

/** Value pieces (large-values.ts) kept for a conversation's items. */
function piecesOf(conversationId: string): Promise<number> {
  return runInDurableObject(
    sessionOf(conversationId),
    (_instance, state) =>
      state.storage.sql
        .exec<{ n: number }>("SELECT COUNT(*) AS n FROM value_pieces WHERE response_id = ?", conversationId)
        .one().n,
  );
}

/** The 404 an SDK call rejects with, or a failure. */
async function notFound(call: Promise<unknown>): Promise<void> {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpenAI.NotFoundError);
}

describe("Conversations API", () => {
  it("creates, reads, updates and deletes a conversation and its items, with OpenAI's shapes and pagination", async () => {
    const client = sdkClient(KEY_A);
    const created = await client.conversations.create({
      items: [user("one"), user("two"), { type: "message", role: "assistant", content: "three" }],
      metadata: { topic: "demo" },
    });
    expect(created.id).toMatch(/^conv_/);
    expect(created).toMatchObject({ object: "conversation", metadata: { topic: "demo" } });
    expect(typeof created.created_at).toBe("number");
    expect(await client.conversations.retrieve(created.id)).toEqual(created);

    const updated = await client.conversations.update(created.id, { metadata: { topic: "other" } });
    expect(updated).toMatchObject({ id: created.id, metadata: { topic: "other" } });

    const added = await client.conversations.items.create(created.id, {
      items: [user("four"), user("five")],
    });
    expect(added.object).toBe("list");
    expect(added.data.map((i) => (i as { content: Array<{ text: string }> }).content[0]?.text)).toEqual([
      "four",
      "five",
    ]);

    // Auto-pagination in pages of 2: five items, in the order they were added, with OpenAI's message shape.
    const items = await allItems(client, created.id, 2);
    expect(items.map((i) => (i.content as Array<{ text: string }>)[0]?.text)).toEqual([
      "one",
      "two",
      "three",
      "four",
      "five",
    ]);
    expect(items[0]).toMatchObject({
      type: "message",
      role: "user",
      status: "completed",
      content: [{ type: "input_text", text: "one" }],
    });
    expect(items[2]).toMatchObject({ role: "assistant", content: [{ type: "output_text", text: "three" }] });
    expect(new Set(items.map((i) => i.id)).size).toBe(5);

    // Newest first by default; one page with has_more.
    const page = await client.conversations.items.list(created.id, { limit: 3 });
    expect(page.data.map((i) => i.id)).toEqual(
      items
        .slice(2)
        .reverse()
        .map((i) => i.id),
    );
    expect(page.has_more).toBe(true);
    expect(page.last_id).toBe(items[2]?.id);

    const second = items[1]?.id as string;
    expect(await client.conversations.items.retrieve(second, { conversation_id: created.id })).toEqual(
      items[1],
    );
    const afterDelete = await client.conversations.items.delete(second, { conversation_id: created.id });
    expect(afterDelete).toMatchObject({ id: created.id, object: "conversation" });
    await notFound(client.conversations.items.retrieve(second, { conversation_id: created.id }));
    expect((await allItems(client, created.id, 100)).length).toBe(4);

    const deleted = await client.conversations.delete(created.id);
    expect(deleted).toEqual({ id: created.id, object: "conversation.deleted", deleted: true });
    await notFound(client.conversations.retrieve(created.id));
    await notFound(client.conversations.items.list(created.id));
  });

  it("refuses an unknown parameter, more than 20 items and more than 16 metadata pairs, as OpenAI", async () => {
    const post = async (body: unknown) => {
      const res = await workerFetch("/v1/conversations", {
        method: "POST",
        headers: { authorization: `Bearer ${KEY_A}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(400);
      return ((await res.json()) as { error: { param: string; code: string } }).error;
    };
    expect(await post({ itemz: [] })).toMatchObject({ param: "itemz", code: "unknown_parameter" });
    expect((await post({ items: Array.from({ length: 21 }, () => user("x")) })).param).toBe("items");
    const metadata = Object.fromEntries(Array.from({ length: 17 }, (_, n) => [`k${n}`, "v"]));
    expect((await post({ metadata })).param).toBe("metadata");
  });

  it("another tenant's conversation id is not found on every route", async () => {
    const mine = await sdkClient(KEY_A).conversations.create({ items: [user("secret")] });
    const [item] = (await sdkClient(KEY_A).conversations.items.list(mine.id)).data;
    const other = sdkClient(KEY_B);
    const id = mine.id;
    const itemId = item?.id as string;
    await notFound(other.conversations.retrieve(id));
    await notFound(other.conversations.update(id, { metadata: { a: "b" } }));
    await notFound(other.conversations.items.list(id));
    await notFound(other.conversations.items.create(id, { items: [user("x")] }));
    await notFound(other.conversations.items.retrieve(itemId, { conversation_id: id }));
    await notFound(other.conversations.items.delete(itemId, { conversation_id: id }));
    await notFound(other.conversations.delete(id));
    await notFound(other.responses.create({ model: "deltagate-sim", input: "hi", conversation: id }));
    // Still there, untouched, for its own tenant.
    expect((await sdkClient(KEY_A).conversations.items.list(id)).data.length).toBe(1);
  });

  it("responses.create({conversation}): items are the context, input and output are appended, turns go upstream as deltas", async () => {
    const marker = `conv-turns-${testId()}`;
    const client = sdkClient(KEY_A);
    const conversation = await client.conversations.create({ items: [user(`${marker} context`)] });
    const one = await client.responses.create({
      model: "sim-ws",
      input: `${marker} one`,
      conversation: conversation.id,
    });
    expect(one.status).toBe("completed");
    expect(one.conversation).toEqual({ id: conversation.id });
    const two = await client.responses.create({
      model: "sim-ws",
      input: `${marker} two`,
      conversation: { id: conversation.id },
    });
    const three = await client.responses.create({
      model: "sim-ws",
      input: `${marker} three`,
      conversation: conversation.id,
    });
    expect(three.conversation).toEqual({ id: conversation.id });

    const items = await allItems(client, conversation.id, 100);
    // context, then each turn's input and output, in order.
    const outputIds = [one, two, three].map((r) => r.output.map((o) => o.id));
    expect(items.length).toBe(1 + 3 + outputIds.flat().length);
    expect(items.map((i) => i.id)).toEqual(expect.arrayContaining(outputIds.flat() as string[]));
    const texts = items
      .filter((i) => i.role === "user")
      .map((i) => (i.content as Array<{ text: string }>)[0]?.text);
    expect(texts).toEqual([`${marker} context`, `${marker} one`, `${marker} two`, `${marker} three`]);

    // The first turn sends the conversation; the next ones only their new item, on the warm socket.
    const upstream = await recorded(marker);
    expect(upstream.map((r) => r.transport)).toEqual(["ws", "ws", "ws"]);
    expect(upstream.map((r) => r.inputItemCount)).toEqual([2, 1, 1]);
    // The third turn's context: every item before it, and its own input.
    expect(upstream[2]?.contextItemCount).toBe(items.length - three.output.length);
  });

  it("two turns of one conversation at once are serialized: each sees the other's items or none", async () => {
    const marker = `conv-race-${testId()}`;
    const client = sdkClient(KEY_A);
    const conversation = await client.conversations.create({});
    const [a, b] = await Promise.all([
      client.responses.create({ model: "sim-ws", input: `${marker} a`, conversation: conversation.id }),
      client.responses.create({ model: "sim-ws", input: `${marker} b`, conversation: conversation.id }),
    ]);
    expect([a.status, b.status]).toEqual(["completed", "completed"]);
    const items = await allItems(client, conversation.id, 100);
    const firstText = ((items[0]?.content ?? []) as Array<{ text: string }>)[0]?.text;
    const [first, second] = firstText === `${marker} a` ? [a, b] : [b, a];
    // One turn's input and output, then the other's: never interleaved.
    expect(items.map((i) => i.id)).toEqual([
      items[0]?.id,
      ...first.output.map((o) => o.id),
      items[1 + first.output.length]?.id,
      ...second.output.map((o) => o.id),
    ]);
    const upstream = await recorded(marker);
    // The second saw the first's items as its context.
    expect(upstream.map((r) => r.contextItemCount)).toEqual([1, 2 + first.output.length]);
  });

  it("refuses conversation with previous_response_id (400), and an unknown conversation (404)", async () => {
    const session = uniqueSession("conv-prev");
    const client = sdkClient(KEY_A, { "session-id": session });
    const conversation = await client.conversations.create({});
    const first = await client.responses.create({ model: "deltagate-sim", input: "hi" });
    const error = await client.responses
      .create({
        model: "deltagate-sim",
        input: "x",
        conversation: conversation.id,
        previous_response_id: first.id,
      })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as { param?: string }).param).toBe("conversation");
    await notFound(
      client.responses.create({ model: "deltagate-sim", input: "x", conversation: "conv_nope" }),
    );
  });

  it("a phone and a page, two sockets on the conversation's session, continue it in turn (deltas upstream)", async () => {
    const marker = `conv-ws-${testId()}`;
    const session = uniqueSession("conv-ws");
    const client = sdkClient(KEY_A, { "session-id": session });
    const conversation = await client.conversations.create({ items: [user(`${marker} hello`)] });
    const phone = await connect({ session });
    const page = await connect({ session });
    phone.send({
      type: "response.create",
      model: "sim-ws",
      input: `${marker} phone`,
      conversation: conversation.id,
    });
    const one = await phone.turn(0);
    await validateWithSdk(one);
    const first = (one.at(-1) as unknown as { type: string; response: { conversation: unknown } }).response;
    expect(one.at(-1)?.type).toBe("response.completed");
    expect(first.conversation).toEqual({ id: conversation.id });
    page.send({
      type: "response.create",
      model: "sim-ws",
      input: `${marker} page`,
      conversation: conversation.id,
    });
    const two = await page.turn(0);
    expect(two.at(-1)?.type).toBe("response.completed");
    const texts = (await allItems(client, conversation.id, 100))
      .filter((i) => i.role === "user")
      .map((i) => (i.content as Array<{ text: string }>)[0]?.text);
    expect(texts).toEqual([`${marker} hello`, `${marker} phone`, `${marker} page`]);
    expect((await recorded(marker)).map((r) => r.inputItemCount)).toEqual([2, 1]);
    phone.close();
    page.close();
  });

  it("a store:false turn of a conversation is appended too", async () => {
    const client = sdkClient(KEY_A);
    const conversation = await client.conversations.create({});
    const one = await client.responses.create({
      model: "deltagate-sim",
      input: "unstored",
      store: false,
      conversation: conversation.id,
    });
    expect(one).toMatchObject({ status: "completed", store: false, conversation: { id: conversation.id } });
    const items = await allItems(client, conversation.id, 100);
    expect(items.map((i) => i.id)).toEqual([items[0]?.id, ...one.output.map((o) => o.id)]);
  });

  it("keeps an item longer than one SQLite row whole, and deletes it with its pieces", async () => {
    const client = sdkClient(KEY_A);
    const long = "x".repeat(600_000); // over large-values.ts PIECE_UNITS: kept in pieces
    const conversation = await client.conversations.create({ items: [user(long), user("short")] });
    const [first] = await allItems(client, conversation.id, 100);
    if (!first) throw new Error("no items");
    expect((first.content as Array<{ text: string }>)[0]?.text).toBe(long);
    expect(await piecesOf(conversation.id)).toBeGreaterThan(1);
    await client.conversations.items.delete(first.id as string, { conversation_id: conversation.id });
    const left = await allItems(client, conversation.id, 100);
    expect(left.map((i) => (i.content as Array<{ text: string }>)[0]?.text)).toEqual(["short"]);
    expect(await piecesOf(conversation.id)).toBe(0);
  });

  it("input_tokens counts a conversation's items with the input; another tenant's conversation is not found", async () => {
    const client = sdkClient(KEY_A);
    const conversation = await client.conversations.create({
      items: [user("a long remembered line of context"), user("and another remembered line")],
    });
    const alone = await client.responses.inputTokens.count({ model: "deltagate-sim", input: "hi" });
    const within = await client.responses.inputTokens.count({
      model: "deltagate-sim",
      input: "hi",
      conversation: conversation.id,
    });
    expect(within.input_tokens).toBeGreaterThan(alone.input_tokens);
    await notFound(
      sdkClient(KEY_B).responses.inputTokens.count({
        model: "deltagate-sim",
        input: "hi",
        conversation: conversation.id,
      }),
    );
  });

  it("compact has no conversation parameter, as OpenAI's: 400 unknown_parameter, nothing run", async () => {
    const conversation = await sdkClient(KEY_A).conversations.create({ items: [user("remember slate")] });
    for (const value of [conversation.id, { id: conversation.id }, "conv_nope"]) {
      const res = await workerFetch("/v1/responses/compact", {
        method: "POST",
        headers: { authorization: `Bearer ${KEY_A}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "deltagate-sim", input: "hello", conversation: value }),
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: unknown }).error).toEqual({
        type: "invalid_request_error",
        code: "unknown_parameter",
        message: "Unknown parameter: 'conversation'.",
        param: "conversation",
      });
    }
  });

  it("a client secret creates conversations in its own session and reaches no other session's", async () => {
    const mine = sdkClient((await mintSecret()).value);
    const own = await mine.conversations.create({ items: [user("mine")] });
    expect((await mine.conversations.items.list(own.id)).data.length).toBe(1);
    const elsewhere = await sdkClient(KEY_A).conversations.create({ items: [user("not yours")] });
    await notFound(mine.conversations.retrieve(elsewhere.id));
    await notFound(mine.conversations.items.list(elsewhere.id));
    await notFound(mine.responses.create({ model: "deltagate-sim", input: "x", conversation: elsewhere.id }));
  });
});
