/**
 * The resend match (src/resend/match.ts) over a held chain, with an in-memory lookup: a request's
 * items continue the longest chain whose history they begin with (by content, and by id where the
 * client gave one), visible to the caller, within the caller's range of prefix lengths — by
 * default at least one item and at least one new item left; a warm-up's repeat asks for every
 * item, a resend chained on a warm-up for more than the warm-up's items.
 */
import { describe, expect, it } from "vitest";
import type { Item, StoredItem } from "../../../src/protocol/items.ts";
import { resendKey } from "../../../src/resend/chain-hash.ts";
import { itemFingerprint } from "../../../src/resend/fingerprint.ts";
import { findResend, prefixChains, type ResendLookup } from "../../../src/resend/match.ts";
import type { ResponseRecord } from "../../../src/store/conversation-store.ts";

const SETTINGS = "settings-key";
const msg = (id: string, text: string): StoredItem =>
  ({ type: "message", id, role: "user", content: [{ type: "input_text", text }] }) as StoredItem;
const [a, b, c, d] = [msg("msg_a", "a"), msg("msg_b", "b"), msg("msg_c", "c"), msg("msg_d", "d")] as [
  StoredItem,
  StoredItem,
  StoredItem,
  StoredItem,
];

/** A session holding completed chains (id → history), each visible unless listed in `hidden`. */
function lookupOf(chains: Record<string, StoredItem[]>, hidden: readonly string[] = []): ResendLookup {
  const held = Object.entries(chains).map(([id, history]) => {
    const hashes = prefixChains(history.map(itemFingerprint));
    return { id, history, key: resendKey(SETTINGS, hashes[history.length]!) };
  });
  const record = (id: string) => ({ id, status: "completed" }) as ResponseRecord;
  return {
    store: {
      get: (id) => (held.some((h) => h.id === id) ? record(id) : null),
      resendCandidates: (keys) =>
        held
          .filter((h) => keys.includes(h.key))
          .sort((x, y) => y.history.length - x.history.length)
          .map((h) => ({ id: h.id, resendKey: h.key, chainItems: h.history.length })),
    },
    history: (id) => {
      const items = held.find((h) => h.id === id)?.history ?? [];
      return { items, counted: [], bound: 0 };
    },
    visible: (r) => !hidden.includes(r.id),
  };
}

/** The match of `given` against `lookup` in the range, as [parent id, matched items] or null. */
function match(lookup: ResendLookup, given: Item[], shortest?: number, longest?: number) {
  const chains = prefixChains(given.map(itemFingerprint));
  const found = findResend(lookup, SETTINGS, given, chains, shortest, longest);
  return found ? [found.parent.id, found.matched] : null;
}

describe("findResend", () => {
  const lookup = lookupOf({ resp_warm: [a], resp_r: [a, b, c] });

  it("continues the longest held chain and leaves at least one new item by default", () => {
    expect(match(lookup, [a, b, c, d])).toEqual(["resp_r", 3]);
    // Exactly the held chain: nothing new, so the shorter chain is continued instead.
    expect(match(lookup, [a, b, c])).toEqual(["resp_warm", 1]);
    expect(match(lookup, [a])).toBeNull();
  });

  it("matches every item when the range allows it (a warm-up's repeat)", () => {
    expect(match(lookup, [a, b, c], 1, 3)).toEqual(["resp_r", 3]);
    expect(match(lookup, [a], 1, 1)).toEqual(["resp_warm", 1]);
  });

  it("never matches fewer items than `shortest` (a resend chained on a warm-up)", () => {
    expect(match(lookup, [a, b, c, d], 2, 3)).toEqual(["resp_r", 3]);
    expect(match(lookupOf({ resp_warm: [a] }), [a, b, c, d], 2, 3)).toBeNull();
  });

  it("compares ids where the client gave one, content elsewhere", () => {
    const { id: _id, ...withoutId } = b;
    expect(match(lookup, [a, withoutId as Item, c, d])).toEqual(["resp_r", 3]);
    expect(match(lookup, [a, { ...b, id: "msg_other" }, c, d])).toEqual(["resp_warm", 1]);
  });

  it("never continues a chain the caller may not see", () => {
    expect(match(lookupOf({ resp_r: [a, b, c] }, ["resp_r"]), [a, b, c, d])).toBeNull();
  });
});
