/**
 * src/upstream/item-conversion.ts: which ids and which reasoning items go upstream. Minted ids
 * never; a reasoning item with its encrypted content as stored (byte-exact, origin mark removed),
 * unless another upstream issued it; by id only to an upstream that stores responses, with the id
 * of its following item; otherwise left out, and its following item without an id.
 */
import { describe, expect, it } from "vitest";
import type { Item } from "../../../src/protocol/items.ts";
import { ORIGIN_FIELD } from "../../../src/upstream/encrypted-reasoning.ts";
import { type ReplayTarget, toUpstreamItems } from "../../../src/upstream/item-conversion.ts";
import { newItemId } from "../../../src/util/ids.ts";

const HERE = "https://api.example.com/v1";
const stateless: ReplayTarget = { origin: HERE, resolvesIds: false };
const storing: ReplayTarget = { origin: HERE, resolvesIds: true };

const user = (text: string): Item => ({
  type: "message",
  id: newItemId("message"),
  role: "user",
  content: text,
});
const answer = (id: string): Item => ({
  type: "message",
  id,
  role: "assistant",
  content: [{ type: "output_text", text: "ok", annotations: [] }],
});
const ENCRYPTED = "gAAAAABpF0x_+/=\u00e9";
const reasoning = (fields: Record<string, unknown>): Item =>
  ({ type: "reasoning", summary: [{ type: "summary_text", text: "plan" }], ...fields }) as Item;

const ids = (items: Item[]) => items.map((item) => (item as { id?: string }).id ?? null);

describe("toUpstreamItems", () => {
  it("drops every id Deltagate minted", () => {
    const items = [
      user("a"),
      { type: "function_call_output", id: newItemId("x"), call_id: "c", output: "o" },
    ];
    expect(ids(toUpstreamItems(items as Item[], stateless))).toEqual([null, null]);
  });

  it("sends a reasoning item with encrypted content as stored, without the origin mark, with its following item's id", () => {
    const item = reasoning({ id: "rs_up1", encrypted_content: ENCRYPTED, [ORIGIN_FIELD]: HERE });
    const sent = toUpstreamItems([user("a"), item, answer("msg_up1"), user("b")], stateless);
    const { [ORIGIN_FIELD]: _mark, ...asIssued } = item as Record<string, unknown>;
    expect(sent[1]).toStrictEqual(asIssued);
    expect(JSON.stringify(sent[1])).toBe(JSON.stringify(asIssued)); // same bytes, same key order
    expect(ids(sent)).toEqual([null, "rs_up1", "msg_up1", null]);
  });

  it("never sends a minted reasoning id (a client's id-less item), nor then its following item's id", () => {
    const item = reasoning({ id: newItemId("reasoning"), encrypted_content: ENCRYPTED });
    const sent = toUpstreamItems([item, answer("msg_client")], stateless);
    expect(sent[0]).toStrictEqual({ type: "reasoning", summary: item.summary, encrypted_content: ENCRYPTED });
    expect(ids(sent)).toEqual([null, null]);
  });

  it("keeps a minted following id out even after an issued reasoning id", () => {
    const item = reasoning({ id: "rs_up1", encrypted_content: ENCRYPTED });
    expect(ids(toUpstreamItems([item, answer(newItemId("message"))], stateless))).toEqual(["rs_up1", null]);
  });

  it("leaves out reasoning another upstream issued, and its following item's id", () => {
    const item = reasoning({
      id: "rs_up1",
      encrypted_content: ENCRYPTED,
      [ORIGIN_FIELD]: "https://other/v1",
    });
    const sent = toUpstreamItems([user("a"), item, answer("msg_up1")], stateless);
    expect(sent.map((i) => i.type)).toEqual(["message", "message"]);
    expect(ids(sent)).toEqual([null, null]);
  });

  it("sends a client's unmarked encrypted reasoning to any upstream", () => {
    const item = reasoning({ id: "rs_client", encrypted_content: ENCRYPTED });
    expect(toUpstreamItems([item, answer("msg_client")], stateless)).toHaveLength(2);
  });

  it("without encrypted content: by id to a storing upstream (with its following item's id), else left out", () => {
    const item = reasoning({ id: "rs_up1", [ORIGIN_FIELD]: HERE });
    const history = [user("a"), item, answer("msg_up1"), user("b")];
    expect(ids(toUpstreamItems(history, storing))).toEqual([null, "rs_up1", "msg_up1", null]);
    const stateLess = toUpstreamItems(history, stateless);
    expect(stateLess.map((i) => i.type)).toEqual(["message", "message", "message"]);
    expect(ids(stateLess)).toEqual([null, null, null]);
  });

  it("by id only when the following item carries the id the upstream issued", () => {
    const minted = [reasoning({ id: "rs_up1" }), answer(newItemId("message"))];
    expect(toUpstreamItems(minted, storing).map((i) => i.type)).toEqual(["message"]);
    const anonymous = [reasoning({ id: newItemId("reasoning") }), answer("msg_up1")];
    expect(ids(toUpstreamItems(anonymous, storing))).toEqual([null]);
    const foreign = [reasoning({ id: "rs_up1", [ORIGIN_FIELD]: "https://other/v1" }), answer("msg_up1")];
    expect(ids(toUpstreamItems(foreign, storing))).toEqual([null]);
  });
});
