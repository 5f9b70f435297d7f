/**
 * The id codecs of src/util/ids.ts: a response id carries its owning Durable Object's id (so the
 * Worker routes it without a lookup) plus 128 random bits; anything else decodes to no owner. Item
 * ids Deltagate mints are recognized as its own; ids a client or an upstream issued are not.
 */
import { describe, expect, it } from "vitest";
import {
  conversationOwner,
  isMintedItemId,
  newConversationId,
  newItemId,
  newResponseId,
  randomToken,
  responseOwner,
} from "../../../src/util/ids.ts";

const OWNER = "0123456789abcdef".repeat(4); // 64 hex chars, every nibble value

describe("response ids", () => {
  it("round-trips the owner: resp_ + 43 owner chars + 22 random chars, URL-safe", () => {
    const id = newResponseId(OWNER);
    expect(id).toMatch(/^resp_[A-Za-z0-9_-]{65}$/);
    expect(responseOwner(id)).toBe(OWNER);
    expect(responseOwner(newResponseId("f".repeat(64)))).toBe("f".repeat(64));
    expect(responseOwner(newResponseId("0".repeat(64)))).toBe("0".repeat(64));
  });

  it("differs in its random part for the same owner", () => {
    const ids = new Set(Array.from({ length: 100 }, () => newResponseId(OWNER)));
    expect(ids.size).toBe(100);
    for (const id of ids) expect(id.slice(0, 48)).toBe(newResponseId(OWNER).slice(0, 48));
  });

  it("decodes anything that is not one of its ids to null", () => {
    const id = newResponseId(OWNER);
    expect(responseOwner("")).toBeNull();
    expect(responseOwner(`msg_${id.slice(5)}`)).toBeNull(); // wrong prefix
    expect(responseOwner(id.slice(0, -1))).toBeNull(); // too short
    expect(responseOwner(`${id}x`)).toBeNull(); // too long
    expect(responseOwner(`resp_${"!".repeat(65)}`)).toBeNull(); // not base64url
    expect(responseOwner("resp_abc")).toBeNull();
  });
});

describe("conversation ids", () => {
  it("name their owner as response ids do: conv_ + 43 owner chars + 22 random chars", () => {
    const id = newConversationId(OWNER);
    expect(id).toMatch(/^conv_[A-Za-z0-9_-]{65}$/);
    expect(conversationOwner(id)).toBe(OWNER);
  });

  it("are never read as response ids, nor response ids as conversation ids", () => {
    expect(responseOwner(newConversationId(OWNER))).toBeNull();
    expect(conversationOwner(newResponseId(OWNER))).toBeNull();
    expect(conversationOwner("conv_nope")).toBeNull();
  });
});

describe("other ids", () => {
  it("uses OpenAI's item prefixes, item_ for other types", () => {
    expect(newItemId("message")).toMatch(/^msg_[A-Za-z0-9_-]{24}$/);
    expect(newItemId("function_call")).toMatch(/^fc_/);
    expect(newItemId("function_call_output")).toMatch(/^fco_/);
    expect(newItemId("reasoning")).toMatch(/^rs_/);
    expect(newItemId("web_search_call")).toMatch(/^item_/);
  });

  it("makes random tokens of the asked size", () => {
    expect(randomToken(3)).toMatch(/^[A-Za-z0-9_-]{4}$/);
    expect(randomToken()).toHaveLength(22);
  });
});

describe("minted item ids", () => {
  it("recognizes every id newItemId mints, for every prefix", () => {
    for (const type of ["message", "function_call", "function_call_output", "reasoning", "web_search_call"]) {
      for (let i = 0; i < 200; i++) {
        const id = newItemId(type);
        expect(id).toMatch(/^(msg|fc|fco|rs|item)_[A-Za-z0-9_-]{24}$/);
        expect(isMintedItemId(id), id).toBe(true);
      }
    }
  });

  it("does not take an issued id for a minted one", () => {
    const issued = [
      "rs_0678e31d0a4d81a800693affe542748195ae3a4de84b1df6a7", // OpenAI
      "msg_0f7f3c2f8044bea20069e593d50690819aa5a1f60ceee17e49",
      "rs_5f1c3b0e6c0a4c59a0e1d0b9f7c2a1e4", // the simulator (32 hex)
      "msg_1",
      "rs_client1",
      "",
      "rs_",
      "xyz_AAAAAAAAAAAAAAAAAAAAAAAA",
    ];
    for (const id of issued) expect(isMintedItemId(id), id).toBe(false);
  });

  it("rejects a minted id with one character changed, or under another prefix", () => {
    const id = newItemId("reasoning");
    const token = id.slice(3);
    const flipped = `${token[0] === "A" ? "B" : "A"}${token.slice(1)}`;
    expect(isMintedItemId(`rs_${flipped}`)).toBe(false);
    expect(isMintedItemId(`call_${token}`)).toBe(false);
    expect(isMintedItemId(`msg_${token}`)).toBe(true); // the prefix is the type's, not part of the check
  });
});
