/**
 * `DELTAGATE_SECRET` in the real Worker (src/config/root-secret.ts): with the old secrets unset,
 * client secrets are signed and checked with the key derived from it; the workers project's own
 * bindings still use the deprecated names (vitest.config.ts), whose key is another one.
 */
import { describe, expect, it } from "vitest";
import { errorOf, fetchWithEnv } from "../support/client-secrets.ts";
import { KEY_A } from "../support/ws-client.ts";

const ROOT = { DELTAGATE_SECRET: "workers-test-root-secret-0123456789abcdef", CLIENT_SECRET_SIGNING_KEY: "" };

describe("DELTAGATE_SECRET", () => {
  it("signs client secrets with its derived key when the old signing key is unset", async () => {
    const mint = await fetchWithEnv(ROOT, "/v1/client_secrets", {
      method: "POST",
      headers: { authorization: `Bearer ${KEY_A}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(mint.status).toBe(200);
    const { value } = (await mint.json()) as { value: string };
    const use = (overrides: Record<string, string>) =>
      fetchWithEnv(overrides, "/v1/models", { headers: { authorization: `Bearer ${value}` } });
    expect((await use(ROOT)).status).toBe(200);
    // The deprecated key, where set, wins: the derived key's secret is not its.
    const old = await use({});
    expect(old.status).toBe(401);
    expect((await errorOf(old)).code).toBe("client_secret_invalid");
  });
});
