/**
 * A tenant's webhook signing secret at rest (src/tenancy/control-crypto.ts): sealed under its own
 * key derived from the control secret, bound to its tenant — it opens for that tenant under that
 * secret only, never as an upstream key (nor an upstream key as a webhook secret), and the stored
 * text does not contain the secret.
 */
import { describe, expect, it } from "vitest";
import {
  controlKeys,
  openUpstreamKey,
  openWebhookSecret,
  sealUpstreamKey,
  sealWebhookSecret,
} from "../../../src/tenancy/control-crypto.ts";
import { newSigningSecret } from "../../../src/webhooks/standard-webhooks.ts";

const SECRET = "unit-control-secret-0123456789-abcdef";

async function keysOf(secret: string) {
  const keys = controlKeys(secret);
  if (!keys) throw new Error("no keys");
  return keys;
}

describe("webhook secret sealing", () => {
  it("opens for its tenant under the same control secret", async () => {
    const keys = await keysOf(SECRET);
    const whsec = newSigningSecret();
    const sealed = await sealWebhookSecret(keys, "acme", whsec);
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain(whsec.slice(6));
    expect(await openWebhookSecret(keys, "acme", sealed)).toBe(whsec);
  });

  it("does not open for another tenant, under another control secret, or as the other purpose", async () => {
    const keys = await keysOf(SECRET);
    const whsec = newSigningSecret();
    const sealed = await sealWebhookSecret(keys, "acme", whsec);
    await expect(openWebhookSecret(keys, "other", sealed)).rejects.toThrow("unreadable sealed value");
    const otherKeys = await keysOf(`${SECRET}-rotated`);
    await expect(openWebhookSecret(otherKeys, "acme", sealed)).rejects.toThrow("unreadable sealed value");
    await expect(openUpstreamKey(keys, "acme", sealed)).rejects.toThrow("unreadable sealed value");
    const upstream = await sealUpstreamKey(keys, "acme", "sk-upstream");
    await expect(openWebhookSecret(keys, "acme", upstream)).rejects.toThrow("unreadable sealed value");
  });
});
