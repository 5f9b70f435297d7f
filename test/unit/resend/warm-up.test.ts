/**
 * Which named parent is an empty warm-up a full resend may be chained on
 * (src/resend/warm-up.ts): no parent, no output, completed, its chain kept, with the request's
 * settings key — its input then starts the request's context. A warm-up's items count as the
 * client gave them: ids Deltagate minted are left out of the match.
 */
import { describe, expect, it } from "vitest";
import type { StoredItem } from "../../../src/protocol/items.ts";
import { settingsKey } from "../../../src/resend/fingerprint.ts";
import { givenItems, warmUpInput } from "../../../src/resend/warm-up.ts";
import type { ResponseRecord } from "../../../src/store/conversation-store.ts";
import { newItemId } from "../../../src/util/ids.ts";

const base = {
  type: "message",
  id: "msg_base",
  role: "developer",
  content: "You are a coding agent.",
} as StoredItem;
const settings = { tools: [{ type: "function", name: "exec_command" }] };
const KEY = settingsKey({ model: "m", store: false }, settings);

const warmUp: ResponseRecord = {
  id: "resp_warm",
  parentId: null,
  connId: "socket_2",
  store: false,
  status: "completed",
  model: "m",
  settings,
  usage: null,
  error: null,
  incompleteDetails: null,
  createdAt: 1,
  completedAt: 2,
  chain: { hash: "h", items: 1 },
};
/** A session holding `resp_warm` (its input `base`) and `resp_turn` (one output item). */
const lookup = {
  store: { outputCount: (id: string) => (id === "resp_turn" ? 1 : 0) },
  history: (id: string) => ({ items: id === "resp_warm" ? [base] : [], counted: [], bound: 0 }),
};

describe("warmUpInput", () => {
  it("is the input of a completed response without parent or output, with the request's settings", () => {
    expect(warmUpInput(lookup, warmUp, KEY)).toEqual([base]);
    expect(warmUpInput(lookup, { ...warmUp, usage: { output_tokens: 0 } }, KEY)).toEqual([base]);
  });

  it("is null for a response with a parent, with output, unfinished, without chain or with other settings", () => {
    expect(warmUpInput(lookup, { ...warmUp, parentId: "resp_0" }, KEY)).toBeNull();
    expect(
      warmUpInput(lookup, { ...warmUp, id: "resp_turn", chain: { hash: "h", items: 2 } }, KEY),
    ).toBeNull();
    expect(warmUpInput(lookup, { ...warmUp, usage: { output_tokens: 3 } }, KEY)).toBeNull();
    // A history changed since it was hashed (an item deleted).
    expect(warmUpInput(lookup, { ...warmUp, chain: { hash: "h", items: 2 } }, KEY)).toBeNull();
    expect(warmUpInput(lookup, { ...warmUp, status: "incomplete" }, KEY)).toBeNull();
    expect(warmUpInput(lookup, { ...warmUp, chain: null }, KEY)).toBeNull();
    expect(warmUpInput(lookup, { ...warmUp, model: "other" }, KEY)).toBeNull();
    expect(warmUpInput(lookup, { ...warmUp, store: true }, KEY)).toBeNull();
    expect(warmUpInput(lookup, { ...warmUp, settings: { ...settings, temperature: 0.5 } }, KEY)).toBeNull();
  });
});

describe("givenItems", () => {
  it("leaves out the ids Deltagate minted and keeps the client's", () => {
    const minted = { ...base, id: newItemId("message") };
    expect(givenItems([base, minted])).toEqual([
      base,
      { type: "message", role: "developer", content: base.content },
    ]);
  });
});
