/**
 * Item references (src/resend/item-references.ts): each `item_reference` becomes the item the
 * session holds under its id, exactly as stored, from the newest response the caller may
 * continue; one that names no such item is OpenAI's 404; input without references is returned
 * as it is.
 */
import { describe, expect, it } from "vitest";
import type { StoredItem } from "../../../src/protocol/items.ts";
import { resolveReferences } from "../../../src/resend/item-references.ts";

const reasoning = {
  type: "reasoning",
  id: "rs_1",
  summary: [],
  encrypted_content: "gAAAAAblob",
} as StoredItem;
const answer = { type: "message", id: "msg_1", role: "assistant", content: "Hi" } as StoredItem;
const question = { type: "message", id: "msg_0", role: "user", content: "Hello" } as StoredItem;
const ref = (id: string) => ({ type: "item_reference", id }) as StoredItem;

/** A store holding `rows` (newest first), as `heldItems` answers. */
function storeOf(rows: Array<{ item: StoredItem; responseId: string }>) {
  return { heldItems: (id: string) => rows.filter((row) => row.item.id === id) };
}

describe("resolveReferences", () => {
  const store = storeOf([
    { item: reasoning, responseId: "resp_1" },
    { item: answer, responseId: "resp_1" },
  ]);

  it("replaces each reference with the held item, byte-exact, in place", () => {
    const resolved = resolveReferences([question, ref("rs_1"), ref("msg_1")], store, () => true);
    expect(resolved).toEqual([question, reasoning, answer]);
    expect(resolved[1]).toBe(reasoning);
  });

  it("returns input without references as it is", () => {
    const items = [question, answer];
    expect(resolveReferences(items, store, () => true)).toBe(items);
  });

  it("takes the newest held copy the caller may continue", () => {
    const newer = { ...answer, content: "newer" } as StoredItem;
    const twoCopies = storeOf([
      { item: newer, responseId: "resp_hidden" },
      { item: answer, responseId: "resp_1" },
    ]);
    expect(resolveReferences([ref("msg_1")], twoCopies, (id) => id !== "resp_hidden")).toEqual([answer]);
  });

  it("answers 404 `Item with id '…' not found.` for an unknown or invisible item", () => {
    for (const [id, visible] of [
      ["msg_unknown", () => true],
      ["msg_1", () => false],
    ] as const) {
      expect(() => resolveReferences([question, ref(id)], store, visible)).toThrowError(
        expect.objectContaining({ status: 404, param: "input", message: `Item with id '${id}' not found.` }),
      );
    }
  });
});
