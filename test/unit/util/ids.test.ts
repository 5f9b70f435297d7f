/**
 * src/util/ids.ts: item ids Deltagate mints are recognized as its own, ids a client or an upstream
 * issued (OpenAI's, the simulator's, free-form ones) are not.
 */
import { describe, expect, it } from "vitest";
import { isMintedItemId, newItemId } from "../../../src/util/ids.ts";

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
