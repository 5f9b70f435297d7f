/**
 * The canonical form of transparent deltas (src/resend/fingerprint.ts): a client's
 * re-serialization of an item Deltagate returned has the same fingerprint; any change the model
 * would read gives another one; reasoning items are matched by id alone.
 */
import { describe, expect, it } from "vitest";
import type { Item } from "../../../src/protocol/items.ts";
import { EMPTY_CHAIN, extendChain } from "../../../src/resend/chain-hash.ts";
import { itemFingerprint, settingsKey } from "../../../src/resend/fingerprint.ts";
import { prefixChains } from "../../../src/resend/match.ts";

const returned = {
  id: "msg_1",
  type: "message",
  status: "completed",
  role: "assistant",
  content: [{ type: "output_text", text: "Hello", annotations: [], logprobs: [] }],
} as Item;

describe("itemFingerprint", () => {
  it("is the same for a client's re-serialization (key order, status, annotations, string content)", () => {
    const fp = itemFingerprint(returned);
    expect(itemFingerprint({ role: "assistant", content: "Hello", type: "message" } as Item)).toBe(fp);
    expect(
      itemFingerprint({
        content: [{ text: "Hello", type: "output_text" }],
        role: "assistant",
        type: "message",
      } as Item),
    ).toBe(fp);
    const call = {
      type: "function_call",
      id: "fc_1",
      call_id: "c1",
      name: "f",
      arguments: "{}",
      status: "completed",
    };
    expect(
      itemFingerprint({ arguments: "{}", name: "f", call_id: "c1", type: "function_call" } as Item),
    ).toBe(itemFingerprint(call as Item));
  });

  it("differs for any change the model would read", () => {
    const fp = itemFingerprint(returned);
    expect(
      itemFingerprint({ ...returned, content: [{ type: "output_text", text: "Hello!" }] } as Item),
    ).not.toBe(fp);
    expect(itemFingerprint({ ...returned, role: "user" } as Item)).not.toBe(fp);
    expect(itemFingerprint({ ...returned, phase: "final_answer" } as Item)).not.toBe(fp);
    const call = { type: "function_call", call_id: "c1", name: "f", arguments: "{}" } as Item;
    expect(itemFingerprint({ ...call, arguments: '{"a":1}' } as Item)).not.toBe(itemFingerprint(call));
    expect(itemFingerprint({ ...call, call_id: "c2" } as Item)).not.toBe(itemFingerprint(call));
  });

  it("matches a reasoning item by id, with or without its content", () => {
    const full = { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gAAAA…" } as Item;
    expect(itemFingerprint({ type: "reasoning", id: "rs_1", summary: [] } as Item)).toBe(
      itemFingerprint(full),
    );
    expect(itemFingerprint({ type: "reasoning", id: "rs_2", summary: [] } as Item)).not.toBe(
      itemFingerprint(full),
    );
  });
});

describe("settingsKey", () => {
  it("changes with the model, store and any setting", () => {
    const base = settingsKey({ model: "m", store: true }, { instructions: "a", tools: [] });
    expect(settingsKey({ model: "m", store: null }, { tools: [], instructions: "a" })).toBe(base);
    expect(settingsKey({ model: "n", store: true }, { instructions: "a", tools: [] })).not.toBe(base);
    expect(settingsKey({ model: "m", store: false }, { instructions: "a", tools: [] })).not.toBe(base);
    expect(settingsKey({ model: "m", store: true }, { instructions: "b", tools: [] })).not.toBe(base);
  });
});

describe("chain hashes", () => {
  it("roll: the prefix hashes end at the hash of the whole, and extending equals hashing at once", () => {
    const items = [returned, { type: "message", role: "user", content: "next" } as Item];
    const chains = prefixChains(items.map(itemFingerprint));
    expect(chains).toHaveLength(3);
    expect(chains[0]).toBe(EMPTY_CHAIN);
    expect(chains[2]).toBe(extendChain(EMPTY_CHAIN, items));
    expect(extendChain(extendChain(EMPTY_CHAIN, items.slice(0, 1)), items.slice(1))).toBe(chains[2]);
  });
});
