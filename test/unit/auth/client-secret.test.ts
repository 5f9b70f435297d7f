/**
 * Client secrets (src/auth/client-secret.ts): a minted secret verifies under its key until it
 * expires; anything else is refused for the right reason; its shape is token characters only.
 */
import { describe, expect, it } from "vitest";
import {
  type ClientSecretClaims,
  mintClientSecret,
  verifyClientSecret,
} from "../../../src/auth/client-secret.ts";
import { SecretRedactor } from "../../../src/secrets/redactor.ts";

const KEY = "unit-test-signing-key-0123456789abcdef";
const NOW = 1_800_000_000;
const CLAIMS: ClientSecretClaims = {
  tenant: "acme",
  id: "sec1",
  sessionId: "sess_abc",
  expiresAt: NOW + 600,
  models: ["deltagate-sim"],
  maxTurns: 5,
  maxRequestBytes: 1000,
};

describe("client secrets", () => {
  it("verify under their key until they expire, with every claim", async () => {
    const secret = await mintClientSecret(KEY, CLAIMS);
    expect(secret).toMatch(/^ek_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/); // fits a subprotocol token and a URL
    expect(await verifyClientSecret(secret, KEY, NOW)).toEqual({ ok: true, claims: CLAIMS });
    expect(await verifyClientSecret(secret, KEY, NOW + 599)).toMatchObject({ ok: true });
    expect(await verifyClientSecret(secret, KEY, NOW + 600)).toEqual({ ok: false, failure: "expired" });
  });

  it("keep absent bindings absent", async () => {
    const open = { ...CLAIMS, models: null, maxTurns: null, maxRequestBytes: null };
    expect(await verifyClientSecret(await mintClientSecret(KEY, open), KEY, NOW)).toEqual({
      ok: true,
      claims: open,
    });
  });

  it("are invalid under another key (rotation revokes them, forgeries fail)", async () => {
    const secret = await mintClientSecret("another-signing-key-0123456789abcdef", CLAIMS);
    expect(await verifyClientSecret(secret, KEY, NOW)).toEqual({ ok: false, failure: "invalid" });
  });

  it("are invalid once any claim is changed, even when re-encoded cleanly", async () => {
    const secret = await mintClientSecret(KEY, CLAIMS);
    const dot = secret.lastIndexOf(".");
    const payload = JSON.parse(Buffer.from(secret.slice(3, dot), "base64url").toString()) as Record<
      string,
      unknown
    >;
    for (const change of [{ s: "sess_other" }, { t: "other-tenant" }, { x: NOW + 99_999 }, { n: 1_000 }]) {
      const tampered = Buffer.from(JSON.stringify({ ...payload, ...change })).toString("base64url");
      const forged = `ek_${tampered}${secret.slice(dot)}`;
      expect(await verifyClientSecret(forged, KEY, NOW)).toEqual({ ok: false, failure: "invalid" });
    }
    // An expired secret whose expiry was pushed forward is invalid, not expired or valid.
    const flipped = `${secret.slice(0, dot)}.${"A".repeat(43)}`;
    expect(await verifyClientSecret(flipped, KEY, NOW)).toEqual({ ok: false, failure: "invalid" });
  });

  it("are malformed when they are not of the shape", async () => {
    for (const value of [
      "ek_",
      "ek_abc",
      "ek_abc.def",
      "ek_!!!.AAAA",
      `ek_${"a".repeat(9000)}.x`,
      "sk-abc",
    ]) {
      expect(await verifyClientSecret(value, KEY, NOW)).toEqual({ ok: false, failure: "malformed" });
    }
  });

  it("are redacted by shape, also inside the subprotocol entry and a URL", async () => {
    const secret = await mintClientSecret(KEY, CLAIMS);
    const redactor = new SecretRedactor([]);
    for (const text of [
      secret,
      `openai-insecure-api-key.${secret}`,
      `/v1/responses?client_secret=${secret}&x=1`,
    ]) {
      expect(redactor.text(text)).not.toContain(secret.slice(3, 30));
    }
  });
});
