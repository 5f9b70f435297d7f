/**
 * The render cache and cached token counts (issue #4 §2): a chained turn's upstream context is the
 * same whether its history came from memory or, after eviction, from SQLite; the cache follows
 * the store through pending entries, deletes (history epoch) and eviction; token counts made with
 * the real tokenizer are persisted on the item rows; small contexts never load the tokenizer.
 */
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { EMPTY_CONTEXT } from "../../src/context/counted-context.ts";
import { itemTokens } from "../../src/context/item-tokens.ts";
import { RenderCache } from "../../src/context/render-cache.ts";
import { loadTokenizer } from "../../src/context/tokenizer.ts";
import type { StoredItem } from "../../src/protocol/items.ts";
import { ConversationStore, type ResponseRecord } from "../../src/store/conversation-store.ts";
import { sessionStub } from "../support/session-stub.ts";
import { testId } from "../support/test-id.ts";
import { connect, type Frame, simulatorRequests, uniqueSession } from "../support/ws-client.ts";

const idOf = (frames: Frame[]) => (frames.at(-1) as unknown as { response: { id: string } }).response.id;

/** Runs a 3-turn chain; evicts the Durable Object before every continuation when asked. */
async function chain(session: string, marker: string, evict: boolean): Promise<unknown[]> {
  const ws = await connect({ session });
  let previous: string | null = null;
  for (const [n, text] of ["first question", "second question", "third question"].entries()) {
    if (evict && previous) await evictDurableObject(sessionStub("tenant-a", session));
    ws.send({
      type: "response.create",
      model: "deltagate-sim",
      safety_identifier: marker,
      previous_response_id: previous,
      input: `${text} [sim:tokens=8]`,
    });
    const frames = await ws.turn(n);
    expect(frames.at(-1)?.type).toBe("response.completed");
    previous = idOf(frames);
  }
  ws.close();
  return (await simulatorRequests(inject("simulatorUrl"), marker)).map(
    (r) => (r.body as { input: unknown }).input,
  );
}

function record(id: string, parentId: string | null): ResponseRecord {
  return {
    id,
    parentId,
    connId: null,
    store: true,
    status: "in_progress",
    model: "m",
    settings: {},
    usage: null,
    error: null,
    incompleteDetails: null,
    createdAt: Date.now(),
    completedAt: null,
  };
}

const user = (id: string, text: string): StoredItem => ({ id, type: "message", role: "user", content: text });
const answer = (id: string, text: string): StoredItem => ({
  id,
  type: "message",
  role: "assistant",
  content: [{ type: "output_text", text }],
});

describe("render cache", () => {
  it("sends the same upstream context from the cache as from SQLite after eviction", async () => {
    const warm = await chain(uniqueSession("cache-warm"), `warm-${testId()}`, false);
    const cold = await chain(uniqueSession("cache-cold"), `cold-${testId()}`, true);
    expect(warm).toHaveLength(3);
    expect(cold).toEqual(warm);
    expect((warm[2] as unknown[]).length).toBe(5); // q1, a1, q2, a2, q3
  });

  it("follows the store: misses, pending entries, hits, deletes and eviction give the store's history", async () => {
    const stub = sessionStub("tenant-a", uniqueSession("cache-unit"));
    await runInDurableObject(stub, (_instance, state) => {
      const store = new ConversationStore(state.storage);
      const cache = new RenderCache(store, 2);
      const items = (id: string) => cache.history(id).items;
      const done = (id: string, output: StoredItem[]) =>
        store.finish(
          id,
          { status: "completed", output, usage: null, error: null, incompleteDetails: null, completedAt: 1 },
          null,
        );
      // r1 from SQLite (miss).
      store.create(record("r1", null), [user("u1", "one")]);
      done("r1", [answer("a1", "uno")]);
      expect(items("r1")).toEqual(store.history("r1"));
      // r2 pending (its context recorded at its start), completed from its stored output.
      const input2 = [user("u2", "two")];
      store.create(record("r2", "r1"), input2);
      cache.remember("r2", {
        ...EMPTY_CONTEXT,
        items: [...items("r1"), ...input2],
        counted: [
          ...cache.history("r1").counted,
          ...input2.map((item, position) => ({
            item,
            key: { responseId: "r2", kind: "input" as const, position },
            tokens: null,
            bound: 100,
          })),
        ],
      });
      done("r2", [answer("a2", "dos")]);
      expect(items("r2")).toEqual(store.history("r2"));
      expect(items("r2")).toEqual(store.history("r2")); // hit
      // r3 on r2; deleting r2 makes r3 the root of its chain: the cached history must not survive.
      store.create(record("r3", "r2"), [user("u3", "three")]);
      done("r3", [answer("a3", "tres")]);
      expect(items("r3").map((i) => i.id)).toEqual(["u1", "a1", "u2", "a2", "u3", "a3"]);
      store.delete("r2");
      expect(items("r3")).toEqual(store.history("r3"));
      expect(items("r3").map((i) => i.id)).toEqual(["u3", "a3"]);
      // Capacity 2: r1 was evicted by now and is read again from SQLite.
      items("r3");
      expect(items("r1")).toEqual(store.history("r1"));
    });
  });

  it("completes a pending entry with the output rows just written, equal to SQLite's (sizes, counts)", async () => {
    const stub = sessionStub("tenant-a", uniqueSession("cache-written"));
    await runInDurableObject(stub, (_instance, state) => {
      const store = new ConversationStore(state.storage);
      const cache = new RenderCache(store);
      const input = [user("u1", "one")];
      store.create(record("r1", null), input);
      cache.remember("r1", {
        ...EMPTY_CONTEXT,
        items: input,
        counted: [
          { item: input[0]!, key: { responseId: "r1", kind: "input", position: 0 }, tokens: null, bound: 9 },
        ],
      });
      // Non-ASCII, an astral character and a lone surrogate: their UTF-8 sizes differ from .length.
      const output = [answer("a1", "café 漢字 🚀 \ud800"), answer("a2", "two")];
      store.finish(
        "r1",
        { status: "completed", output, usage: null, error: null, incompleteDetails: null, completedAt: 1 },
        null,
      );
      store.setItemTokens([{ responseId: "r1", kind: "output", position: 1, tokens: 7 }]);
      const fromWrite = cache.history("r1").counted.slice(1); // the input's entry is the test's own
      const fromSql = new RenderCache(store).history("r1").counted.slice(1);
      expect(fromWrite).toEqual(fromSql);
      expect(fromWrite.map((c) => c.tokens)).toEqual([null, 7]);
    });
  });
});

describe("token counts", () => {
  it("persists counts made with the real tokenizer on the item rows, once the window needs them", async () => {
    const session = uniqueSession("tokens");
    const ws = await connect({ session });
    const input = `${Array.from({ length: 60 }, () => "delta").join(" ")} [sim:tokens=6]`;
    ws.send({ type: "response.create", model: "sim-small-model", input });
    const first = idOf(await ws.turn(0));
    ws.send({ type: "response.create", model: "sim-small-model", previous_response_id: first, input });
    expect((await ws.turn(1)).at(-1)?.type).toBe("response.completed");
    ws.close();
    const rows = await runInDurableObject(sessionStub("tenant-a", session), (_instance, state) =>
      state.storage.sql
        .exec<{ data: string; tokens: number | null; kind: number }>("SELECT data, tokens, kind FROM items")
        .toArray(),
    );
    const count = await loadTokenizer();
    // Both inputs and the first output were needed to fit turn 2; turn 2's output was not yet.
    const counted = rows.filter((row) => row.tokens !== null);
    expect(counted).toHaveLength(3);
    for (const row of counted) expect(row.tokens).toBe(itemTokens(JSON.parse(row.data) as StoredItem, count));
    expect(counted.find((row) => row.kind === 0)?.tokens).toBe(3 + count("user") + count(input));
  });

  it("leaves small contexts uncounted: their byte bound already fits the window", async () => {
    const session = uniqueSession("tokens-lazy");
    const ws = await connect({ session });
    ws.send({ type: "response.create", model: "deltagate-sim", input: "short [sim:tokens=4]" });
    expect((await ws.turn(0)).at(-1)?.type).toBe("response.completed");
    ws.close();
    const nulls = await runInDurableObject(sessionStub("tenant-a", session), (_instance, state) =>
      state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM items WHERE tokens IS NULL").one(),
    );
    expect(nulls.n).toBe(2);
  });
});
