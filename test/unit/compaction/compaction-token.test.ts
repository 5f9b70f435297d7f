/**
 * Sealed compaction tokens (src/compaction/compaction-token.ts): a token opens only for the tenant
 * it was sealed for, with a key of the deployment (rotation keeps old items readable), and any
 * changed byte, another tenant, another key or another issuer's token is refused.
 */
import { describe, expect, it } from "vitest";
import {
  CompactionTokenError,
  isDeltagateToken,
  openToken,
  sealToken,
} from "../../../src/compaction/compaction-token.ts";

const payload = {
  v: 1 as const,
  summary: "The code word is slate.",
  model: "m",
  created_at: 1,
  window: false,
};
const keys = { secrets: ["key-one"] };

describe("compaction tokens", () => {
  it("round-trip for the same tenant; the summary is not readable in the token", async () => {
    const token = await sealToken(payload, "tenant-a", keys);
    expect(isDeltagateToken(token)).toBe(true);
    expect(token).not.toContain("slate");
    expect(await openToken(token, "tenant-a", keys)).toEqual(payload);
  });

  it("refuses another tenant, a changed byte, an unknown key and another issuer's token", async () => {
    const token = await sealToken(payload, "tenant-a", keys);
    await expect(openToken(token, "tenant-b", keys)).rejects.toBeInstanceOf(CompactionTokenError);
    // A character inside the body, where all six of its bits are data: the last character's low
    // bits can be padding, so changing it may change no byte (a 3-in-64 flake it once caused).
    const at = token.length - 8;
    const changed = token.slice(0, at) + (token[at] === "A" ? "B" : "A") + token.slice(at + 1);
    await expect(openToken(changed, "tenant-a", keys)).rejects.toBeInstanceOf(CompactionTokenError);
    await expect(openToken(token, "tenant-a", { secrets: ["key-two"] })).rejects.toBeInstanceOf(
      CompactionTokenError,
    );
    await expect(openToken("gAAAAABfernet", "tenant-a", keys)).rejects.toBeInstanceOf(CompactionTokenError);
    await expect(openToken("dgc1.zz.@@@", "tenant-a", keys)).rejects.toBeInstanceOf(CompactionTokenError);
    // A body whose length is 1 mod 4 under a kid of this deployment: no base64url has that length.
    const head = token.slice(0, token.lastIndexOf(".") + 1);
    for (const body of ["A", "AAAAA", token.slice(head.length, head.length + 41)]) {
      await expect(openToken(head + body, "tenant-a", keys)).rejects.toBeInstanceOf(CompactionTokenError);
    }
  });

  it("rotation: a new current key still opens items sealed with the previous one", async () => {
    const old = await sealToken(payload, "tenant-a", keys);
    const rotated = { secrets: ["key-two", "key-one"] };
    expect(await openToken(old, "tenant-a", rotated)).toEqual(payload);
    const fresh = await sealToken(payload, "tenant-a", rotated);
    await expect(openToken(fresh, "tenant-a", keys)).rejects.toBeInstanceOf(CompactionTokenError);
  });

  it("refuses to seal without a key", async () => {
    await expect(sealToken(payload, "tenant-a", { secrets: [] })).rejects.toBeInstanceOf(
      CompactionTokenError,
    );
  });
});
