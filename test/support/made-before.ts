/**
 * Credentials and sealed values made before the crypto toolkit (src/crypto/) still work after it:
 * test/fixtures/crypto/made-before-toolkit.json holds a minted API key and its stored hash, a
 * client secret, a sealed compaction item, a sealed tenant upstream key and two ids, all made by
 * the code of commit fb11a0e with the test secrets it lists. Each must verify, unseal or decode
 * to what it was made from; and where the format is deterministic (an API key's tag, a client
 * secret's signature), minting the same input today gives the same bytes.
 */
import { describe, expect, it } from "vitest";
import { mintClientSecret, verifyClientSecret } from "../../src/auth/client-secret.ts";
import { openToken } from "../../src/compaction/compaction-token.ts";
import { keyHash, parseKey, verifyTag } from "../../src/tenancy/api-keys.ts";
import { controlKeys, openUpstreamKey } from "../../src/tenancy/control-crypto.ts";
import { isMintedItemId, responseOwner } from "../../src/util/ids.ts";
import made from "../fixtures/crypto/made-before-toolkit.json";

const { controlSecret, clientSecretSigningKey, compactionKey } = made.secrets;

async function control() {
  const keys = controlKeys(controlSecret);
  if (!keys) throw new Error("the fixture's control secret is too short");
  return keys;
}

/** The checks, for the unit tests' Node and for workerd (the runtime the values are used in). */
export function describeMadeBefore(where: string): void {
  describe(`values made before the crypto toolkit (${where})`, () => {
    it("a minted API key still verifies, and hashes to what the control plane stored", async () => {
      const parsed = parseKey(made.apiKey.key);
      expect(parsed).toMatchObject({
        tenant: made.apiKey.tenant,
        keyId: made.apiKey.keyId,
        prefix: made.apiKey.prefix,
      });
      expect(await verifyTag((await control()).signing, parsed!)).toBe(true);
      expect(await keyHash(made.apiKey.key)).toBe(made.apiKey.hash);
      // One changed tag digit, or another control secret, fails.
      const last = made.apiKey.key.endsWith("0") ? "1" : "0";
      expect(await verifyTag((await control()).signing, parseKey(made.apiKey.key.slice(0, -1) + last)!)).toBe(
        false,
      );
      const other = controlKeys("another-control-secret-0123456789")!;
      expect(await verifyTag((await other).signing, parsed!)).toBe(false);
    });

    it("a client secret still verifies with its claims, and minting the same claims gives the same secret", async () => {
      const verified = await verifyClientSecret(
        made.clientSecret.value,
        clientSecretSigningKey,
        1_800_000_000,
      );
      expect(verified).toEqual({ ok: true, claims: made.clientSecret.claims });
      expect(await mintClientSecret(clientSecretSigningKey, made.clientSecret.claims)).toBe(
        made.clientSecret.value,
      );
      expect(
        await verifyClientSecret(made.clientSecret.value, `${clientSecretSigningKey}x`, 1_800_000_000),
      ).toEqual({
        ok: false,
        failure: "invalid",
      });
    });

    it("a sealed compaction item still opens for its tenant, and only for it", async () => {
      const { tenant, encrypted_content, payload } = made.compactionItem;
      expect(await openToken(encrypted_content, tenant, { secrets: [compactionKey] })).toEqual(payload);
      // After a rotation the old key, listed second, still opens it.
      expect(await openToken(encrypted_content, tenant, { secrets: ["a-newer-key", compactionKey] })).toEqual(
        payload,
      );
      await expect(
        openToken(encrypted_content, "tenant-other", { secrets: [compactionKey] }),
      ).rejects.toThrow();
    });

    it("a sealed tenant upstream key still opens for its tenant, and only for it", async () => {
      const { tenant, plaintext, sealed } = made.tenantUpstreamKey;
      expect(await openUpstreamKey(await control(), tenant, sealed)).toBe(plaintext);
      await expect(openUpstreamKey(await control(), "tenant-other", sealed)).rejects.toThrow();
    });

    it("a response id still names its owning Durable Object, and a minted item id is still recognised", () => {
      expect(responseOwner(made.ids.responseId)).toBe(made.ids.responseOwner);
      expect(isMintedItemId(made.ids.itemId)).toBe(true);
    });
  });
}
