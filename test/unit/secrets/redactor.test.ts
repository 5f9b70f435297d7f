import { describe, expect, it } from "vitest";
import { invalidApiKey } from "../../../src/protocol/errors.ts";
import { REDACTED, SecretRedactor } from "../../../src/secrets/redactor.ts";

/** Keys of every shape the hostile trials saw relayed verbatim (issue #10). */
const PLAIN_KEY = "Zq8ty3PLAINalnum7730key";
const KEYS = {
  openai: "sk-proj-AbCdEf0123456789xyz",
  groq: "gsk_4fKq0123456789abcdefXYZ",
  xai: "xai-Q1w2E3r4T5y6U7i8O9p0",
  azure: "0123456789abcdef0123456789abcdef",
  google: "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4",
  fireworks: "fw_3ZkP0123456789abcdefgh",
  plain: PLAIN_KEY,
};

describe("SecretRedactor", () => {
  const redactor = SecretRedactor.fromEnv({
    UPSTREAM_API_KEY: KEYS.plain,
    GROQ_KEY: KEYS.groq,
    DELTAGATE_API_KEYS: "tenantkey-aaaa1111:acme,short:b",
    MODELS: "gpt-5.1",
    NOT_A_STRING: 42,
  });

  it.each(Object.entries(KEYS))("redacts a %s key wherever it appears in a message", (_name, key) => {
    for (const message of [
      `Incorrect API key provided: ${key}.`,
      `{"error":{"message":"bad key ${key}"}}`,
      `${key}`,
      `auth failed (key=${key})`,
    ]) {
      const out = redactor.text(message);
      expect(out).not.toContain(key);
      expect(out).toContain(REDACTED);
    }
  });

  it("redacts configured values that have no known shape, and tenant keys", () => {
    const out = redactor.text(`keys: ${PLAIN_KEY} and tenantkey-aaaa1111`);
    expect(out).toBe(`keys: ${REDACTED} and ${REDACTED}`);
  });

  it("redacts masked keys as providers echo them", () => {
    const out = redactor.text("Incorrect API key provided: sk-abc12***************wxyz. You can find…");
    expect(out).not.toMatch(/sk-abc12/);
  });

  it("redacts bearer tokens and key-valued fields", () => {
    expect(redactor.text("header Authorization: Bearer abc.def-ghi")).not.toContain("abc.def-ghi");
    expect(redactor.text('{"api_key": "whatever-123"}')).not.toContain("whatever-123");
    expect(redactor.text("x-api-key=hunter2hunter2")).not.toContain("hunter2hunter2");
  });

  it("leaves ordinary text alone", () => {
    for (const text of [
      "The model `gpt-5.1` does not exist.",
      "Rate limit reached for requests. Try again in 20ms.",
      "run: kill -9 1234 && rm -rf build/",
      "skeleton key-value store",
    ]) {
      expect(redactor.text(text)).toBe(text);
    }
  });

  it("leaves Deltagate's own 401 message whole: a placeholder is not a secret (issue #15)", () => {
    const message = invalidApiKey().message;
    expect(message).toContain("`Authorization: Bearer <key>`");
    expect(redactor.text(message)).toBe(message);
    for (const text of ["Send `Authorization: Bearer <client secret>`.", "api_key=<your key>"]) {
      expect(redactor.text(text)).toBe(text);
    }
  });

  it("still redacts a real credential after `Authorization:`, also one that follows a scheme", () => {
    for (const text of [
      "Authorization: Bearer tok-123456789abc",
      "`Authorization: Bearer tok-123456789abc`",
      "authorization=Basic dXNlcjpwYXNzd29yZA==",
      "Bearer tok-123456789abc`",
    ]) {
      const out = redactor.text(text);
      expect(out).not.toContain("tok-123456789abc");
      expect(out).not.toContain("dXNlcjpwYXNzd29yZA");
      expect(out).toContain(REDACTED);
    }
  });

  it("learns values at run time (a tenant's own upstream key), longest first, never forgetting", () => {
    const redactor = new SecretRedactor(["plainConfiguredValue1"]);
    expect(redactor.text("tenantOwnKeyZZ and tenantOwnKeyZZlonger")).toBe(
      "tenantOwnKeyZZ and tenantOwnKeyZZlonger",
    );
    redactor.add(["tenantOwnKeyZZ", "short"]);
    redactor.add(["tenantOwnKeyZZlonger"]);
    expect(redactor.text("tenantOwnKeyZZ and tenantOwnKeyZZlonger, plainConfiguredValue1, short")).toBe(
      "[redacted] and [redacted], [redacted], short",
    );
  });

  it("ignores configured values too short to be keys", () => {
    expect(redactor.text("short answer")).toBe("short answer");
  });

  it("redacts every string of a JSON value, however deep, without touching keys or the original", () => {
    let deep: unknown = { message: `echo ${KEYS.openai}` };
    for (let i = 0; i < 3_000; i++) deep = [deep]; // deep enough to overflow a recursive walk in workerd
    const input = { error: { message: `key ${PLAIN_KEY}`, code: "invalid_api_key" }, deep, n: 1 };
    const out = redactor.json(input);
    expect(JSON.stringify(out)).not.toContain(PLAIN_KEY);
    expect(JSON.stringify(out)).not.toContain(KEYS.openai);
    expect(out.error.code).toBe("invalid_api_key");
    expect(out.n).toBe(1);
    expect(input.error.message).toContain(PLAIN_KEY);
  });
});
