/**
 * Sealing (src/crypto/sealing.ts): a sealed value opens only with its key and its additional
 * data, and answers null, never throws, for anything else.
 */
import { describe, expect, it } from "vitest";
import { fromUtf8, toHex } from "../../../src/crypto/encoding.ts";
import { importKey, sha256 } from "../../../src/crypto/keys.ts";
import { IV_BYTES, open, seal } from "../../../src/crypto/sealing.ts";

describe("sealing", () => {
  it("opens with its key and its additional data only; a changed or cut value is null", async () => {
    const key = await importKey(await sha256("secret"), "aes-gcm");
    const sealed = await seal(key, "plain text", "tenant-a");
    expect(sealed.length).toBe(IV_BYTES + "plain text".length + 16);
    expect(fromUtf8((await open(key, sealed, "tenant-a"))!)).toBe("plain text");
    expect(await open(key, sealed, "tenant-b")).toBeNull();
    expect(await open(await importKey(await sha256("other"), "aes-gcm"), sealed, "tenant-a")).toBeNull();
    const changed = sealed.slice();
    changed[IV_BYTES] = (changed[IV_BYTES] ?? 0) ^ 1;
    expect(await open(key, changed, "tenant-a")).toBeNull();
    expect(await open(key, sealed.subarray(0, IV_BYTES + 15), "tenant-a")).toBeNull();
    // A fresh IV each time: the same plaintext never seals to the same bytes.
    expect(toHex(await seal(key, "plain text", "tenant-a"))).not.toBe(toHex(sealed));
  });
});
