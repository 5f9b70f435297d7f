/**
 * The id codecs of src/util/ids.ts: a response id carries its owning Durable Object's id (so the
 * Worker routes it without a lookup) plus 128 random bits; anything else decodes to no owner.
 */
import { describe, expect, it } from "vitest";
import { newItemId, newResponseId, randomToken, responseOwner } from "../../../src/util/ids.ts";

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

describe("other ids", () => {
  it("uses OpenAI's item prefixes, item_ for other types", () => {
    expect(newItemId("message")).toMatch(/^msg_[A-Za-z0-9_-]{22}$/);
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
