/**
 * Storage calls on every turn's path that must not write when nothing changes: cleaning up the
 * store:false scope of a connection that owns nothing (every store:true HTTP turn) keeps the
 * history epoch, so the render cache survives it; claiming a session's tenant writes only the
 * first time, and still refuses every other tenant; finishing a response that no longer exists
 * (its store:false socket closed meanwhile) writes nothing, without reading it first.
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
