/** Signing (src/crypto/signing.ts): a signature checks only for its text and key. */
import { describe, expect, it } from "vitest";
import { importKey } from "../../../src/crypto/keys.ts";
import { safeEqual, sign, verify } from "../../../src/crypto/signing.ts";

describe("signing", () => {
  it("a MAC checks for its text and key only", async () => {
    const key = await importKey("a signing key of at least thirty-two chars", "hmac");
    const mac = await sign(key, "ek_payload");
    expect(mac.length).toBe(32);
    expect(await verify(key, mac, "ek_payload")).toBe(true);
    expect(await verify(key, mac, "ek_payloaD")).toBe(false);
    expect(
      await verify(await importKey("another signing key, also long enough", "hmac"), mac, "ek_payload"),
    ).toBe(false);
  });

  it("safeEqual compares whole strings", () => {
    expect(safeEqual("abc", "abc")).toBe(true);
    expect(safeEqual("abc", "abd")).toBe(false);
    expect(safeEqual("abc", "abcd")).toBe(false);
  });
});
