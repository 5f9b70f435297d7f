/**
 * Compaction item rules (src/compaction/compaction-items.ts): a trailing `compaction_trigger` is
 * taken off the input (anywhere else is a 400), and a chain's context starts at its latest
 * compaction item that was a response's output (marked), never at one a client sent.
 */
import { describe, expect, it } from "vitest";
import { fromWindowStart, splitTrigger } from "../../../src/compaction/compaction-items.ts";
import type { CountedContext } from "../../../src/context/counted-context.ts";
import { ApiError } from "../../../src/protocol/errors.ts";
import type { StoredItem } from "../../../src/protocol/items.ts";
import { ORIGIN_FIELD } from "../../../src/upstream/encrypted-reasoning.ts";

function context(items: StoredItem[]): CountedContext {
  const counted = items.map((item, position) => ({
    item,
    key: { responseId: "resp_x", kind: "input" as const, position },
    tokens: 10,
    bound: 20,
  }));
  return { items, counted, bound: 10 * items.length };
}

const message = (id: string) => ({ type: "message", role: "user", content: id, id }) as StoredItem;

describe("splitTrigger", () => {
  it("takes a trailing trigger off", () => {
    const split = splitTrigger([message("a"), { type: "compaction_trigger" }]);
    expect(split).toEqual({ items: [message("a")], trigger: true });
    expect(splitTrigger([message("a")])).toEqual({ items: [message("a")], trigger: false });
  });

  it("refuses a trigger that is not last", () => {
    expect(() => splitTrigger([{ type: "compaction_trigger" }, message("a")])).toThrow(ApiError);
  });
});

describe("fromWindowStart", () => {
  it("starts at the latest compaction output, keeping its counts", () => {
    const output = { type: "compaction", id: "cmp_1", encrypted_content: "x", [ORIGIN_FIELD]: "deltagate" };
    const later = { ...output, id: "cmp_2" };
    const history = context([
      message("a"),
      output as StoredItem,
      message("b"),
      later as StoredItem,
      message("c"),
    ]);
    const kept = fromWindowStart(history);
    expect(kept.items.map((item) => item.id)).toEqual(["cmp_2", "c"]);
    expect(kept.bound).toBe(20);
  });

  it("leaves a context alone whose compaction items a client sent (unmarked)", () => {
    const sent = { type: "compaction", id: "cmp_1", encrypted_content: "x" } as StoredItem;
    const history = context([message("a"), sent, message("b")]);
    expect(fromWindowStart(history)).toBe(history);
  });
});
