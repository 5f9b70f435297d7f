/**
 * Storage calls on every turn's path that must not write when nothing changes: cleaning up the
 * store:false scope of a connection that owns nothing (every store:true HTTP turn) keeps the
 * history epoch, so the render cache survives it; claiming a session's tenant writes only the
 * first time, and still refuses every other tenant; finishing a response that no longer exists
 * (its store:false socket closed meanwhile) writes nothing, without reading it first; the oldest
 * store:true response (the retention alarm's deadline, asked after every turn) is read once and
 * then kept true by creates and deletions; the output rows `finish` just wrote are handed to their
 * first read instead of read back, unless they are large.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { StoredItem } from "../../src/protocol/items.ts";
import { ConversationStore, type ResponseRecord } from "../../src/store/conversation-store.ts";
import { claimTenant, ownerTenant } from "../../src/store/session-meta.ts";
import { sessionStub } from "../support/session-stub.ts";
import { uniqueSession } from "../support/ws-client.ts";

function record(id: string, connId: string | null): ResponseRecord {
  return {
    id,
    parentId: null,
    connId,
    store: connId === null,
    status: "completed",
    model: "m",
    settings: {},
    usage: null,
    error: null,
    incompleteDetails: null,
    createdAt: Date.now(),
    completedAt: Date.now(),
  };
}

const user = (id: string): StoredItem => ({ id, type: "message", role: "user", content: "hi" });

describe("per-turn storage calls", () => {
  it("keeps the history epoch when a connection owns nothing, and bumps it when it deletes", async () => {
    const stub = sessionStub("tenant-a", uniqueSession("hot-path-scope"));
    await runInDurableObject(stub, (_instance, state) => {
      const store = new ConversationStore(state.storage);
      store.create(record("kept", null), [user("u1")]);
      store.create(record("scoped", "conn_x"), [user("u2")]);
      const before = store.historyEpoch;

      expect(store.deleteConnectionScoped("http_owns_nothing")).toBe(0);
      expect(store.historyEpoch).toBe(before);
      expect(store.get("kept")).not.toBeNull();
      expect(store.get("scoped")).not.toBeNull();

      expect(store.deleteConnectionScoped("conn_x")).toBe(1);
      expect(store.historyEpoch).not.toBe(before);
      expect(store.get("scoped")).toBeNull();
      expect(store.items("scoped", "input")).toEqual([]);
      expect(store.get("kept")).not.toBeNull();
    });
  });

  it("reads the oldest store:true response once, then follows creates and deletions", async () => {
    const stub = sessionStub("tenant-a", uniqueSession("hot-path-oldest"));
    await runInDurableObject(stub, (_instance, state) => {
      const store = new ConversationStore(state.storage);
      const at = (id: string, createdAt: number, connId: string | null = null) => ({
        ...record(id, connId),
        createdAt,
      });
      expect(store.oldestStored()).toBeNull();
      store.create(at("s200", 200), [user("u1")]);
      store.create(at("f100", 100, "conn_x"), [user("u2")]); // store:false: not retained
      expect(store.oldestStored()).toBe(200);
      store.create(at("s150", 150), [user("u3")]);
      // Read once: a row changed behind the store's back does not show until a deletion.
      state.storage.sql.exec("UPDATE responses SET created_at = 1 WHERE id = 's200'");
      expect(store.oldestStored()).toBe(150);
      expect(store.delete("s150")).toBe(true);
      expect(store.oldestStored()).toBe(1);
      store.create(at("s300", 300), [user("u4")]);
      expect(store.oldestStored()).toBe(1);
    });
  });

  it("hands a finished response's output rows to their first read, except large output", async () => {
    const stub = sessionStub("tenant-a", uniqueSession("hot-path-written"));
    await runInDurableObject(stub, (_instance, state) => {
      const store = new ConversationStore(state.storage);
      const finish = (id: string, text: string) => {
        store.create({ ...record(id, null), status: "in_progress", completedAt: null }, [user(`u_${id}`)]);
        const output = [{ id: `msg_${id}`, type: "message", role: "assistant", content: text } as StoredItem];
        store.finish(
          id,
          { status: "completed", output, usage: null, error: null, incompleteDetails: null, completedAt: 1 },
          null,
        );
        // Changed behind the store's back: only a read of SQLite sees it.
        state.storage.sql.exec("UPDATE items SET tokens = 99 WHERE response_id = ? AND kind = 1", id);
      };
      finish("small", "hi");
      finish("large", "x".repeat(1_100_000));
      expect(store.outputRows("small").map((row) => row.tokens)).toEqual([null]); // as written
      expect(store.outputRows("small").map((row) => row.tokens)).toEqual([99]); // handed over once
      expect(store.outputRows("large").map((row) => row.tokens)).toEqual([99]); // never kept
    });
  });

  it("claims the tenant once and refuses every other tenant afterwards", async () => {
    const stub = sessionStub("tenant-a", uniqueSession("hot-path-tenant"));
    await runInDurableObject(stub, (_instance, state) => {
      const sql = state.storage.sql;
      new ConversationStore(state.storage); // runs the migrations (the meta table)
      expect(ownerTenant(sql)).toBeNull();
      expect(claimTenant(sql, "tenant-a")).toBe(true);
      expect(claimTenant(sql, "tenant-a")).toBe(true);
      expect(claimTenant(sql, "tenant-b")).toBe(false);
      expect(ownerTenant(sql)).toBe("tenant-a");
    });
  });

  it("finishes an existing response with its output, and writes nothing for a gone one", async () => {
    const stub = sessionStub("tenant-a", uniqueSession("hot-path-finish"));
    await runInDurableObject(stub, (_instance, state) => {
      const store = new ConversationStore(state.storage);
      store.create({ ...record("running", null), status: "in_progress", completedAt: null }, [user("u1")]);
      const outcome = {
        status: "completed" as const,
        output: [{ id: "msg_o", type: "message", role: "assistant", content: [] } as StoredItem],
        usage: { input_tokens: 1 },
        error: null,
        incompleteDetails: null,
        completedAt: 5,
      };
      store.finish("running", outcome, ['{"type":"response.completed","sequence_number":0}']);
      expect(store.get("running")).toMatchObject({ status: "completed", usage: { input_tokens: 1 } });
      expect(store.items("running", "output").map((item) => item.id)).toEqual(["msg_o"]);
      expect(store.eventLogs.read("running")).toEqual([{ type: "response.completed", sequence_number: 0 }]);

      store.finish("gone", outcome, ['{"type":"response.completed","sequence_number":0}']);
      expect(store.get("gone")).toBeNull();
      expect(store.items("gone", "output")).toEqual([]);
      expect(store.eventLogs.read("gone")).toBeNull();
    });
  });
});
