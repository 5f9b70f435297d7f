/**
 * Authentication (src/worker/auth.ts): where a credential is looked for, what each place accepts,
 * and the protocol the 101 echoes. Every refusal is a thrown `ApiError`, like every route's.
 */

import { describe, expect, it } from "vitest";
import { mintClientSecret } from "../../../src/auth/client-secret.ts";
import { parseConfig } from "../../../src/config/config.ts";
import type { Env } from "../../../src/config/env.ts";
import { ApiError } from "../../../src/protocol/errors.ts";
import type { TenancyEnv } from "../../../src/tenancy/tenancy-env.ts";
import { authenticate, echoedProtocol } from "../../../src/worker/auth.ts";

const SIGNING_KEY = "unit-auth-signing-key-0123456789abcdef";
const env = (extra: Record<string, string> = {}) =>
  ({
    DELTAGATE_API_KEYS: "key-aaaa1111:acme",
    CLIENT_SECRET_SIGNING_KEY: SIGNING_KEY,
    ...extra,
  }) as unknown as Env;
const config = parseConfig(env());

function request(headers: Record<string, string>, query = ""): Request {
  return new Request(`http://dg.test/v1/responses${query}`, { headers });
}
const upgrade = { upgrade: "websocket" };
const secret = () =>
  mintClientSecret(SIGNING_KEY, {
    tenant: "acme",
    id: "s1",
    sessionId: "sess_1",
    expiresAt: Math.floor(Date.now() / 1000) + 60,
    models: null,
    maxTurns: null,
    maxRequestBytes: null,
  });

async function refusal(promise: Promise<unknown>): Promise<{ status: number; code: string | null }> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return { status: (error as ApiError).status, code: (error as ApiError).code };
}

/** No control plane bound: keys resolve from DELTAGATE_API_KEYS alone (src/tenancy/resolve-key.ts). */
const ENV: TenancyEnv = {};

describe("authenticate", () => {
  it("takes a tenant key from Authorization or api-key", async () => {
    for (const headers of [{ authorization: "Bearer key-aaaa1111" }, { "api-key": "key-aaaa1111" }]) {
      expect(await authenticate(request(headers), ENV, config, { clientSecrets: true })).toMatchObject({
        tenant: "acme",
        secret: null,
        account: { id: "acme", keyId: "env" },
      });
    }
  });

  it("takes a client secret from the header, the subprotocol or the query of an upgrade", async () => {
    const value = await secret();
    for (const [headers, query] of [
      [{ authorization: `Bearer ${value}` }, ""],
      [{ ...upgrade, "sec-websocket-protocol": `responses, openai-insecure-api-key.${value}` }, ""],
      [upgrade, `?client_secret=${value}`],
    ] as const) {
      const principal = await authenticate(request(headers, query), ENV, config, { clientSecrets: true });
      expect(principal).toMatchObject({ tenant: "acme", secret: { sessionId: "sess_1" } });
    }
  });

  it("looks at the subprotocol and the query of upgrades only", async () => {
    const value = await secret();
    expect(
      await refusal(
        authenticate(request({}, `?client_secret=${value}`), ENV, config, { clientSecrets: true }),
      ),
    ).toEqual({ status: 401, code: "invalid_api_key" });
  });

  it("uses the header first when several places hold a credential", async () => {
    const value = await secret();
    const both = request({ ...upgrade, authorization: "Bearer key-aaaa1111" }, `?client_secret=${value}`);
    expect((await authenticate(both, ENV, config, { clientSecrets: true })).secret).toBeNull();
  });

  it("refuses a tenant key where proxies log it, unless ALLOW_INSECURE_API_KEY", async () => {
    const inProtocol = request({
      ...upgrade,
      "sec-websocket-protocol": "x, openai-insecure-api-key.key-aaaa1111",
    });
    const inQuery = request(upgrade, "?api_key=key-aaaa1111");
    for (const req of [inProtocol, inQuery]) {
      expect(await refusal(authenticate(req, ENV, config, { clientSecrets: true }))).toEqual({
        status: 401,
        code: "api_key_not_allowed_here",
      });
      const allowed = parseConfig(env({ ALLOW_INSECURE_API_KEY: "true" }));
      expect((await authenticate(req, ENV, allowed, { clientSecrets: true })).tenant).toBe("acme");
    }
  });

  it("refuses a valid secret where secrets may not be used, after checking it", async () => {
    const value = await secret();
    const req = request({ authorization: `Bearer ${value}` });
    expect(await refusal(authenticate(req, ENV, config, { clientSecrets: false }))).toEqual({
      status: 403,
      code: "client_secret_not_allowed",
    });
    const forged = request({ authorization: `Bearer ${value.slice(0, -2)}AA` });
    expect((await refusal(authenticate(forged, ENV, config, { clientSecrets: false }))).code).toBe(
      "client_secret_invalid",
    );
  });

  it("refuses a missing or unknown credential with invalid_api_key", async () => {
    for (const req of [request({}), request({ authorization: "Bearer nope-nope-nope" })]) {
      expect(await refusal(authenticate(req, ENV, config, { clientSecrets: true }))).toEqual({
        status: 401,
        code: "invalid_api_key",
      });
    }
  });
});

describe("echoedProtocol", () => {
  const offer = (value: string) => new Headers({ "sec-websocket-protocol": value });
  it("is the first offered protocol that is not a credential, never the credential", () => {
    expect(echoedProtocol(offer("openai-insecure-api-key.ek_x, responses, realtime"))).toBe("responses");
    expect(echoedProtocol(offer("realtime"))).toBe("realtime");
    expect(echoedProtocol(offer("openai-insecure-api-key.ek_x"))).toBeNull();
    expect(echoedProtocol(new Headers())).toBeNull();
  });
});

describe("configuration of client secrets and CORS", () => {
  it("refuses a short signing key, a demo tenant without a key, a tenant key shaped like a secret, a non-origin", () => {
    expect(() => parseConfig(env({ CLIENT_SECRET_SIGNING_KEY: "short" }))).toThrow(/at least 32/);
    expect(() => parseConfig(env({ DEMO_CLIENT_SECRET_TENANT: "nobody" }))).toThrow(
      /DEMO_CLIENT_SECRET_TENANT/,
    );
    expect(() => parseConfig(env({ DELTAGATE_API_KEYS: "ek_abcdef:acme" }))).toThrow(/ek_/);
    expect(() => parseConfig(env({ CORS_ALLOWED_ORIGINS: "https://a.example/" }))).toThrow(/not an origin/);
  });

  it("parses the defaults and a list", async () => {
    expect(config.corsOrigins).toBe("*");
    expect({ ...config.clientSecrets, signingKey: await config.clientSecrets.signingKey }).toEqual({
      signingKey: SIGNING_KEY,
      allowInsecureApiKey: false,
      demoTenant: null,
    });
    const listed = parseConfig(env({ CORS_ALLOWED_ORIGINS: "https://a.example, http://localhost:5173" }));
    expect(listed.corsOrigins).toEqual(new Set(["https://a.example", "http://localhost:5173"]));
  });
});
