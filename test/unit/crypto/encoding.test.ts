/**
 * The encodings (src/crypto/encoding.ts): base64url, base64 and hex round-trip every byte, and a decoder
 * answers null, never throws, for text that is not its encoding — a length no encoding yields
 * included (1 mod 4 in base64url: `atob` throws on it).
 */
import { describe, expect, it } from "vitest";
import {
  fromBase64,
  fromBase64Url,
  fromHex,
  fromUtf8,
  toBase64,
  toBase64Url,
  toHex,
  utf8,
} from "../../../src/crypto/encoding.ts";

const every = Uint8Array.from({ length: 256 }, (_, i) => i);

describe("base64url", () => {
  it("round-trips every byte value at every length mod 3, unpadded and in token characters", () => {
    for (const length of [0, 1, 2, 3, 255, 256]) {
      const bytes = every.subarray(0, length);
      const text = toBase64Url(bytes);
      expect(text).toMatch(/^[A-Za-z0-9_-]*$/);
      expect(fromBase64Url(text)).toEqual(bytes);
    }
    expect(toBase64Url(Uint8Array.of(0xfb, 0xff))).toBe("-_8");
  });

  it("decodes what is not base64url to null, without throwing", () => {
    for (const bad of ["A", "AAAAA", "abc=", "ab+/", "a b", "ab\n", "é"])
      expect(fromBase64Url(bad)).toBeNull();
  });
});

describe("base64", () => {
  it("round-trips every byte value at every length mod 3, padded, as Node's Buffer writes it", () => {
    for (const length of [0, 1, 2, 3, 255, 256]) {
      const bytes = every.subarray(0, length);
      const text = toBase64(bytes);
      expect(text).toBe(Buffer.from(bytes).toString("base64"));
      expect(fromBase64(text)).toEqual(bytes);
    }
  });

  it("decodes what is not padded base64 to null, without throwing", () => {
    for (const bad of ["A", "AA", "AAA", "AAAAA", "ab-_", "a b=", "AA=A", "é"])
      expect(fromBase64(bad)).toBeNull();
  });
});

describe("hex", () => {
  it("round-trips every byte value, lowercase", () => {
    expect(toHex(every)).toMatch(/^[0-9a-f]{512}$/);
    expect(fromHex(toHex(every))).toEqual(every);
    expect(toHex(Uint8Array.of(0, 10, 255).buffer)).toBe("000aff");
  });

  it("decodes what is not hex to null", () => {
    for (const bad of ["a", "0g", "0x00", " 00"]) expect(fromHex(bad)).toBeNull();
  });
});

describe("UTF-8", () => {
  it("round-trips text beyond ASCII", () => {
    expect(fromUtf8(utf8("naïve 漢 🙂"))).toBe("naïve 漢 🙂");
  });
});
