/**
 * Keys (src/crypto/keys.ts): keys derived for two purposes differ, the same inputs derive the
 * same key, and the per-secret memo is bounded.
 */
import { describe, expect, it } from "vitest";
import { deriveKey, perSecret } from "../../../src/crypto/keys.ts";
import { sign, verify } from "../../../src/crypto/signing.ts";

describe("keys", () => {
  it("HKDF gives one key per info, and the same key for the same inputs", async () => {
    const a = await deriveKey("root secret", "salt", "purpose-a", "hmac");
    const again = await deriveKey("root secret", "salt", "purpose-a", "hmac");
    const b = await deriveKey("root secret", "salt", "purpose-b", "hmac");
    const mac = await sign(a, "text");
    expect(await verify(again, mac, "text")).toBe(true);
    expect(await verify(b, mac, "text")).toBe(false);
  });

  it("perSecret makes a secret's value once, and forgets the oldest past its limit", async () => {
    const made: string[] = [];
    const memo = perSecret(async (secret) => {
      made.push(secret);
      return secret.length;
    }, 2);
    await memo("one");
    await memo("one");
    await memo("two");
    await memo("three"); // drops "one"
    await memo("one");
    expect(made).toEqual(["one", "two", "three", "one"]);
  });
});
