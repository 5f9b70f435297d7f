/** The 128-bit string hash (src/util/hash128.ts): deterministic, 32 hex characters, spread. */
import { describe, expect, it } from "vitest";
import { hash128 } from "../../../src/util/hash128.ts";

describe("hash128", () => {
  it("is deterministic and 32 hex characters, for every length of tail", () => {
    for (let n = 0; n < 20; n++) {
      const text = "x".repeat(n);
      expect(hash128(text)).toBe(hash128(text));
      expect(hash128(text)).toMatch(/^[0-9a-f]{32}$/);
    }
  });

  it("gives distinct values for near-identical inputs (no collision among 20,000)", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 10_000; i++) {
      seen.add(hash128(`item ${i}`));
      seen.add(hash128(`item ${i}\u0000`));
    }
    expect(seen.size).toBe(20_000);
    expect(hash128("ab")).not.toBe(hash128("ba"));
    expect(hash128("é")).not.toBe(hash128("e"));
  });
});
