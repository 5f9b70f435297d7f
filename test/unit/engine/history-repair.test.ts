/**
 * src/engine/history-repair.ts: what interrupted and deleted turns leave behind is dropped
 * together with what depends on it; a finished parent's unanswered call is kept for the check.
 */
import { describe, expect, it } from "vitest";
import type { CountedContext, CountedItem } from "../../../src/context/counted-context.ts";
import { repairHistory } from "../../../src/engine/history-repair.ts";
import type { Item, StoredItem } from "../../../src/protocol/items.ts";

type Side = "input" | "output";

/** Builds a counted history from `[responseId, side, item]` rows. */
function history(rows: Array<[string, Side, Item]>): CountedContext {
  const counted: CountedItem[] = rows.map(([responseId, kind, item], position) => ({
    item: { id: `i${position}`, ...item } as StoredItem,
    key: { responseId, kind, position },
    tokens: 10,
    bound: 20,
  }));
  return { items: counted.map((c) => c.item), counted, bound: counted.length * 10 };
}

const user = (text: string): Item => ({ type: "message", role: "user", content: text });
const assistant = (text: string): Item => ({ type: "message", role: "assistant", content: text });
const call = (id: string): Item => ({ type: "function_call", call_id: id, name: "f", arguments: "{}" });
const out = (id: string): Item => ({ type: "function_call_output", call_id: id, output: "ok" });
const reasoning: Item = { type: "reasoning", summary: [] };

function types(context: CountedContext): string[] {
  return context.items.map((item) => {
    const callId = (item as { call_id?: string }).call_id;
    return callId ? `${item.type}:${callId}` : item.type;
  });
}

describe("repairHistory", () => {
  it("returns the same context when nothing needs repair", () => {
    const h = history([
      ["r1", "input", user("a")],
      ["r1", "output", reasoning],
      ["r1", "output", call("c1")],
      ["r2", "input", out("c1")],
      ["r2", "output", assistant("done")],
    ]);
    expect(repairHistory(h, [user("b")], { id: "r2", status: "completed" })).toBe(h);
  });

  it("drops a reasoning item a failure or cancel left without its following item", () => {
    const h = history([
      ["r1", "input", user("a")],
      ["r1", "output", reasoning],
    ]);
    const repaired = repairHistory(h, [user("b")], { id: "r1", status: "cancelled" });
    expect(types(repaired)).toEqual(["message"]);
    expect(repaired.bound).toBe(10);
    expect(repaired.counted[0]?.key).toEqual({ responseId: "r1", kind: "input", position: 0 });
  });

  it("drops unanswered calls of a failed parent with their reasoning; keeps answered ones", () => {
    const h = history([
      ["r1", "input", user("a")],
      ["r1", "output", reasoning],
      ["r1", "output", call("c1")],
      ["r1", "output", call("c2")],
    ]);
    const failed = { id: "r1", status: "failed" };
    expect(types(repairHistory(h, [user("b")], failed))).toEqual(["message"]);
    expect(types(repairHistory(h, [out("c2")], failed))).toEqual([
      "message",
      "reasoning",
      "function_call:c2",
    ]);
  });

  it("keeps a finished parent's unanswered call: the client must answer it", () => {
    const h = history([
      ["r1", "input", user("a")],
      ["r1", "output", call("c1")],
    ]);
    expect(types(repairHistory(h, [user("b")], { id: "r1", status: "completed" }))).toEqual([
      "message",
      "function_call:c1",
    ]);
  });

  it("drops what a deleted response leaves: an answer without call, a call without answer", () => {
    // r2 (which answered c1) was deleted; r3 now follows r1.
    const answerGone = history([
      ["r1", "input", user("a")],
      ["r1", "output", call("c1")],
      ["r3", "input", user("b")],
      ["r3", "output", assistant("ok")],
    ]);
    expect(types(repairHistory(answerGone, [user("c")], { id: "r3", status: "completed" }))).toEqual([
      "message",
      "message",
      "message",
    ]);
    // r1 (which made c1) was deleted; r2 starts the chain with its output.
    const callGone = history([
      ["r2", "input", out("c1")],
      ["r2", "output", assistant("ok")],
    ]);
    expect(types(repairHistory(callGone, [user("c")], { id: "r2", status: "completed" }))).toEqual([
      "message",
    ]);
  });

  it("drops items an interrupted upstream reported unfinished", () => {
    const h = history([
      ["r1", "input", user("a")],
      [
        "r1",
        "output",
        { type: "function_call", call_id: "c1", name: "f", arguments: '{"cm', status: "in_progress" },
      ],
    ]);
    expect(types(repairHistory(h, [out("c1")], { id: "r1", status: "failed" }))).toEqual(["message"]);
  });

  it("is idempotent and stable when the history grows by a turn", () => {
    const h = history([
      ["r1", "input", user("a")],
      ["r1", "output", reasoning],
      ["r1", "output", call("c1")],
      ["r2", "input", user("b")],
      ["r2", "output", assistant("ok")],
    ]);
    const once = repairHistory(h, [user("c")], { id: "r2", status: "completed" });
    expect(types(once)).toEqual(["message", "message", "message"]);
    expect(repairHistory(once, [user("c")], { id: "r2", status: "completed" })).toBe(once);
  });
});
