/**
 * The Standard Webhooks signature (src/webhooks/standard-webhooks.ts): the spec's own example
 * vector; what it signs, the `openai` SDK's `webhooks.unwrap()` verifies (and a changed body, id or
 * timestamp does not); secrets are `whsec_` + base64 of 24–64 bytes.
 */
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { newSigningSecret, secretBytes, signatureHeaders } from "../../../src/webhooks/standard-webhooks.ts";

describe("signatureHeaders", () => {
  it("signs id.timestamp.body with HMAC-SHA256 under the secret's bytes (the Standard Webhooks example)", async () => {
    // https://github.com/standard-webhooks/standard-webhooks (the libraries' shared test vector).
    const headers = await signatureHeaders(
      "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      "msg_p5jXN8AQM9LWM0D4loKWxJek",
      1614265330,
      '{"test": 2432232314}',
    );
    expect(headers).toEqual({
      "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
      "webhook-timestamp": "1614265330",
      "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    });
  });

  it("is verified by the openai SDK's webhooks.unwrap(), and a changed body, id or time is not", async () => {
    const secret = newSigningSecret();
    const body = JSON.stringify({
      id: "evt_0123",
      object: "event",
      created_at: 1_700_000_000,
      type: "response.completed",
      data: { id: "resp_abc" },
    });
    const now = Math.floor(Date.now() / 1000);
    const headers = { ...(await signatureHeaders(secret, "wh_0123", now, body)) };
    const client = new OpenAI({ apiKey: "unused", webhookSecret: secret });
    const event = await client.webhooks.unwrap(body, headers);
    expect(event).toMatchObject({ type: "response.completed", data: { id: "resp_abc" } });
    await expect(client.webhooks.unwrap(body.replace("abc", "abd"), headers)).rejects.toThrow();
    await expect(client.webhooks.unwrap(body, { ...headers, "webhook-id": "wh_other" })).rejects.toThrow();
    await expect(
      client.webhooks.unwrap(body, { ...headers, "webhook-timestamp": String(now + 1) }),
    ).rejects.toThrow();
    const other = new OpenAI({ apiKey: "unused", webhookSecret: newSigningSecret() });
    await expect(other.webhooks.unwrap(body, headers)).rejects.toThrow();
  });

  it("refuses to sign with what is not a signing secret", async () => {
    await expect(signatureHeaders("not-a-secret", "wh_1", 1, "{}")).rejects.toThrow(/whsec_/);
  });
});

describe("signing secrets", () => {
  it("makes whsec_ + base64 of 32 random bytes, a new one each time", () => {
    const a = newSigningSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secretBytes(a)?.length).toBe(32);
    expect(newSigningSecret()).not.toBe(a);
  });

  it("accepts 24 to 64 bytes behind the prefix, and nothing else", () => {
    const of = (n: number) => `whsec_${Buffer.alloc(n, 7).toString("base64")}`;
    expect(secretBytes(of(24))?.length).toBe(24);
    expect(secretBytes(of(64))?.length).toBe(64);
    for (const bad of [of(23), of(65), of(32).slice(6), "whsec_not base64!", `sk_${of(32).slice(6)}`])
      expect(secretBytes(bad), bad).toBeNull();
  });
});
