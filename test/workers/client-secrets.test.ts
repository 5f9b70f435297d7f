/**
 * Client secrets (issue #16 items 1-2): minting, every refusal before the upgrade with its own
 * code, the browser's ways to present one (subprotocol, query) and the echoed protocol, the tenant
 * key refused where proxies log it, reuse across sockets, a socket that outlives its secret, and
 * rotation of the signing key.
 */
import { describe, expect, it } from "vitest";
import {
  accepted,
  errorOf,
  fetchWithEnv,
  mintSecret,
  signSecret,
  TEST_SIGNING_KEY,
  upgradeWith,
} from "../support/client-secrets.ts";
import { KEY_A, outputText, uniqueSession, workerFetch } from "../support/ws-client.ts";

const MODEL = "deltagate-sim";
const create = (input: string, extra: Record<string, unknown> = {}) => ({
  type: "response.create",
  model: MODEL,
  input,
  ...extra,
});

describe("POST /v1/client_secrets", () => {
  it("mints a secret bound to a fresh session, shaped like OpenAI's Realtime client secrets", async () => {
    const before = Math.floor(Date.now() / 1000);
    const res = await workerFetch("/v1/client_secrets", {
      method: "POST",
      headers: { authorization: `Bearer ${KEY_A}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(["expires_at", "session", "value"]);
    expect(body.value).toMatch(/^ek_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(body.expires_at).toBeGreaterThanOrEqual(before + 600);
    expect(body.expires_at).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 600);
    expect(body.session).toEqual({
      id: expect.stringMatching(/^sess_/),
      models: null,
      max_turns: null,
      max_request_bytes: null,
    });
    // Two mints, two sessions: one end user's secret never reaches another's.
    const other = await mintSecret();
    expect(other.session.id).not.toBe((body.session as { id: string }).id);
  });

  it("binds the named session and the chosen limits; expires_after.seconds sets the lifetime", async () => {
    const session = uniqueSession("named");
    const minted = await mintSecret({
      expires_after: { anchor: "created_at", seconds: 7200 },
      session: { id: session, models: [MODEL], max_turns: 3, max_request_bytes: 4096 },
    });
    expect(minted.session).toEqual({ id: session, models: [MODEL], max_turns: 3, max_request_bytes: 4096 });
    expect(minted.expires_at - Math.floor(Date.now() / 1000)).toBeGreaterThan(7190);
  });

  it.each([
    [{ expires_after: { seconds: 9 } }, "expires_after.seconds"],
    [{ expires_after: { seconds: 7201 } }, "expires_after.seconds"],
    [{ expires_after: { anchor: "now", seconds: 60 } }, "expires_after.anchor"],
    [{ session: { id: "bad id" } }, "session.id"],
    [{ session: { max_turns: 0 } }, "session.max_turns"],
    [{ session: { models: [] } }, "session.models"],
    [{ session: { max_request_bytes: 25 * 1024 * 1024 } }, "session.max_request_bytes"],
    // An unknown field is named with its path, as OpenAI names an unknown parameter (unknown_parameter).
    [{ session: { max_turn: 3 } }, "session.max_turn"],
  ])("refuses %j with a 400 naming the field", async (body, param) => {
    const res = await workerFetch("/v1/client_secrets", {
      method: "POST",
      headers: { authorization: `Bearer ${KEY_A}` },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).param).toBe(param);
  });

  it("cannot be called with a client secret: a secret never mints a secret", async () => {
    const { value } = await mintSecret();
    const res = await workerFetch("/v1/client_secrets", {
      method: "POST",
      headers: { authorization: `Bearer ${value}` },
    });
    expect(res.status).toBe(403);
    const text = await res.text();
    expect(text).toContain("client_secret_not_allowed");
    expect(text).not.toContain(value.slice(3, 40));
  });

  it("answers 501 when the deployment has no signing key, and then accepts no secret", async () => {
    const off = { CLIENT_SECRET_SIGNING_KEY: "" };
    const mint = await fetchWithEnv(off, "/v1/client_secrets", {
      method: "POST",
      headers: { authorization: `Bearer ${KEY_A}` },
    });
    expect(mint.status).toBe(501);
    expect((await errorOf(mint)).code).toBe("client_secrets_not_configured");
    const { value } = await mintSecret();
    const use = await fetchWithEnv(off, "/v1/models", { headers: { authorization: `Bearer ${value}` } });
    expect(use.status).toBe(401);
    expect((await errorOf(use)).code).toBe("client_secret_invalid");
  });
});

/** The headers of the demo page's own request: its origin, a JSON body. */
const SAME_ORIGIN = { origin: "http://deltagate.test", "content-type": "application/json" };

describe("POST /demo/client_secret (development only)", () => {
  it("mints for DEMO_CLIENT_SECRET_TENANT without authentication, a secret that opens a socket", async () => {
    const res = await workerFetch("/demo/client_secret", {
      method: "POST",
      headers: SAME_ORIGIN,
      body: "{}",
    });
    expect(res.status).toBe(200);
    const minted = (await res.json()) as { value: string; session: { id: string } };
    const ws = await accepted(await upgradeWith({ headers: { authorization: `Bearer ${minted.value}` } }));
    ws.send(create("Hello there"));
    expect((await ws.turn(0)).at(-1)?.type).toBe("response.completed");
    ws.close();
  });

  // The cross-origin mint of issue #23: a page elsewhere sent a simple `text/plain` POST (no
  // preflight) and read the secret, as CORS answered `*`. The route now takes only its own page.
  it.each<[string, Record<string, string>, number, string]>([
    [
      "another origin, text/plain (no preflight)",
      { origin: "https://evil.example", "content-type": "text/plain" },
      403,
      "demo_origin_not_allowed",
    ],
    [
      "another origin, JSON",
      { origin: "https://evil.example", "content-type": "application/json" },
      403,
      "demo_origin_not_allowed",
    ],
    [
      "no Origin (not a browser page)",
      { "content-type": "application/json" },
      403,
      "demo_origin_not_allowed",
    ],
    [
      "the null origin (a sandboxed frame)",
      { origin: "null", "content-type": "application/json" },
      403,
      "demo_origin_not_allowed",
    ],
    [
      "its own origin, text/plain",
      { origin: "http://deltagate.test", "content-type": "text/plain" },
      415,
      "unsupported_content_type",
    ],
    [
      "its own origin, a form",
      { origin: "http://deltagate.test", "content-type": "application/x-www-form-urlencoded" },
      415,
      "unsupported_content_type",
    ],
    ["its own origin, no content type", { origin: "http://deltagate.test" }, 415, "unsupported_content_type"],
  ])("refuses %s", async (_label, headers, status, code) => {
    const res = await workerFetch("/demo/client_secret", { method: "POST", headers, body: "{}" });
    expect(res.status).toBe(status);
    const text = await res.text();
    expect(JSON.parse(text).error.code).toBe(code);
    expect(text).not.toContain("ek_");
  });

  it("does not exist unless the setting is on", async () => {
    const res = await fetchWithEnv({ DEMO_CLIENT_SECRET_TENANT: "" }, "/demo/client_secret", {
      method: "POST",
    });
    expect(res.status).toBe(404);
  });
});

describe("refused secrets: 401 JSON before any upgrade, each with its code", () => {
  const cases: Array<[string, () => Promise<string>, string]> = [
    ["expired", () => signSecret({ expiresAt: Math.floor(Date.now() / 1000) - 1 }), "client_secret_expired"],
    [
      "forged (another key)",
      () => signSecret({}, "a-forger-s-own-signing-key-0123456789"),
      "client_secret_invalid",
    ],
    [
      "tampered (its session changed)",
      async () => {
        const value = await signSecret({});
        const dot = value.lastIndexOf(".");
        const payload = JSON.parse(
          atob(value.slice(3, dot).replaceAll("-", "+").replaceAll("_", "/")),
        ) as object;
        const changed = btoa(JSON.stringify({ ...payload, s: "someone-else" }))
          .replaceAll("+", "-")
          .replaceAll("/", "_")
          .replace(/=+$/, "");
        return `ek_${changed}${value.slice(dot)}`;
      },
      "client_secret_invalid",
    ],
    ["malformed", async () => "ek_not-a-secret", "client_secret_malformed"],
    ["of a tenant with no key", () => signSecret({ tenant: "tenant-gone" }), "client_secret_tenant_unknown"],
  ];

  it.each(cases)("%s: header, subprotocol and query alike", async (_label, secret, code) => {
    const value = await secret();
    for (const res of [
      await upgradeWith({ headers: { authorization: `Bearer ${value}` } }),
      await upgradeWith({ protocols: ["responses", `openai-insecure-api-key.${value}`] }),
      await upgradeWith({ query: `client_secret=${value}` }),
      await workerFetch("/v1/models", { headers: { authorization: `Bearer ${value}` } }),
    ]) {
      expect(res.status).toBe(401);
      expect(res.webSocket).toBeNull();
      const text = await res.text();
      expect(JSON.parse(text).error.code).toBe(code);
      expect(text).not.toContain(value.slice(3, 40));
    }
  });

  it("a secret of session S naming session T (header or query): 401 client_secret_session_mismatch", async () => {
    const { value, session } = await mintSecret({ session: { id: uniqueSession("s") } });
    for (const res of [
      await upgradeWith({ headers: { authorization: `Bearer ${value}`, "session-id": uniqueSession("t") } }),
      await upgradeWith({ query: `client_secret=${value}&session=${uniqueSession("t")}` }),
      await workerFetch("/v1/responses", {
        method: "POST",
        headers: { authorization: `Bearer ${value}`, "x-session-id": uniqueSession("t") },
        body: JSON.stringify({ model: MODEL, input: "hi" }),
      }),
    ]) {
      expect(res.status).toBe(401);
      expect(res.webSocket).toBeNull();
      expect((await errorOf(res)).code).toBe("client_secret_session_mismatch");
    }
    // Naming its own session is fine.
    const ws = await accepted(await upgradeWith({ query: `client_secret=${value}&session=${session.id}` }));
    ws.close();
  });

  it("rotating the signing key revokes every secret", async () => {
    const { value } = await mintSecret();
    const res = await fetchWithEnv(
      { CLIENT_SECRET_SIGNING_KEY: `${TEST_SIGNING_KEY}-rotated` },
      "/v1/models",
      { headers: { authorization: `Bearer ${value}` } },
    );
    expect(res.status).toBe(401);
    expect((await errorOf(res)).code).toBe("client_secret_invalid");
  });
});

describe("browser WebSocket auth", () => {
  it("takes the secret from the subprotocol offer and echoes the other protocol, never the secret", async () => {
    const { value } = await mintSecret();
    const res = await upgradeWith({ protocols: ["responses", `openai-insecure-api-key.${value}`] });
    expect(res.headers.get("sec-websocket-protocol")).toBe("responses");
    const ws = await accepted(res);
    ws.send(create("Say hello"));
    const frames = await ws.turn(0);
    expect(frames.at(-1)?.type).toBe("response.completed");
    expect(outputText(frames).length).toBeGreaterThan(0);
    ws.close();
  });

  it("takes the secret from ?client_secret=", async () => {
    const { value } = await mintSecret();
    const ws = await accepted(await upgradeWith({ query: `client_secret=${encodeURIComponent(value)}` }));
    ws.send(create("Say hello"));
    expect((await ws.turn(0)).at(-1)?.type).toBe("response.completed");
    ws.close();
  });

  it("refuses an offer that holds only the credential (nothing could be echoed): 400", async () => {
    const { value } = await mintSecret();
    const res = await upgradeWith({ protocols: [`openai-insecure-api-key.${value}`] });
    expect(res.status).toBe(400);
    expect(res.webSocket).toBeNull();
    const text = await res.text();
    expect(JSON.parse(text).error.code).toBe("websocket_protocol_required");
    expect(text).not.toContain(value.slice(3, 40));
  });

  it("echoes an offered protocol for a header-authenticated socket too", async () => {
    const res = await upgradeWith({ protocols: ["realtime"], headers: { authorization: `Bearer ${KEY_A}` } });
    expect(res.headers.get("sec-websocket-protocol")).toBe("realtime");
    (await accepted(res)).close();
  });

  it("refuses a tenant key in the subprotocol or the query by default, and takes it when allowed", async () => {
    for (const res of [
      await upgradeWith({ protocols: ["responses", `openai-insecure-api-key.${KEY_A}`] }),
      await upgradeWith({ query: `api_key=${KEY_A}` }),
      await upgradeWith({ query: `client_secret=${KEY_A}` }),
    ]) {
      expect(res.status).toBe(401);
      expect(res.webSocket).toBeNull();
      const text = await res.text();
      expect(JSON.parse(text).error.code).toBe("api_key_not_allowed_here");
      expect(text).not.toContain(KEY_A);
    }
    const allowed = await fetchWithEnv({ ALLOW_INSECURE_API_KEY: "true" }, "/v1/responses", {
      headers: {
        upgrade: "websocket",
        "sec-websocket-protocol": `responses, openai-insecure-api-key.${KEY_A}`,
      },
    });
    expect(allowed.status).toBe(101);
    expect(allowed.headers.get("sec-websocket-protocol")).toBe("responses");
    allowed.webSocket?.accept();
    allowed.webSocket?.close(1000);
  });

  it("a secret opens several sockets until it expires (a reconnecting phone reuses it)", async () => {
    const { value } = await mintSecret();
    for (let i = 0; i < 3; i++) {
      const ws = await accepted(await upgradeWith({ query: `client_secret=${value}` }));
      ws.send(create(`turn ${i}`));
      expect((await ws.turn(0)).at(-1)?.type).toBe("response.completed");
      ws.close();
    }
  });

  it("after expiry, a new secret for the same session continues the chain and resumes its events", async () => {
    const session = uniqueSession("renewed");
    const first = await signSecret({ sessionId: session, expiresAt: Math.floor(Date.now() / 1000) + 60 });
    const ws = await accepted(await upgradeWith({ query: `client_secret=${first}` }));
    ws.send(create("first turn"));
    const done = (await ws.turn(0)).at(-1) as unknown as { type: string; response: { id: string } };
    expect(done.type).toBe("response.completed");
    ws.close();
    // The backend mints again for the app's session; the new socket continues and resumes.
    const { value } = await mintSecret({ session: { id: session } });
    const next = await accepted(
      await upgradeWith({ protocols: ["responses", `openai-insecure-api-key.${value}`] }),
    );
    next.send(create("second turn", { previous_response_id: done.response.id }));
    expect((await next.turn(0)).at(-1)?.type).toBe("response.completed");
    const before = next.frames.length;
    next.send({ type: "deltagate.response.resume", response_id: done.response.id, starting_after: 2 });
    await next.until((frames) => frames.slice(before).some((f) => f.type === "response.completed"));
    const replayed = next.frames.slice(before) as Array<{ type: string; sequence_number?: number }>;
    expect(replayed[0]?.sequence_number).toBe(3);
    expect(replayed.at(-1)?.type).toBe("response.completed");
    next.close();
    const resumed = await workerFetch(`/v1/responses/${done.response.id}?stream=true&starting_after=2`, {
      headers: { authorization: `Bearer ${value}` },
    });
    expect(resumed.status).toBe(200);
    const text = await resumed.text();
    expect(text).toContain('"sequence_number":3');
    expect(text).not.toContain('"sequence_number":2,');
    expect(text).toContain("event: response.completed");
  });

  it("a socket opened in time keeps running after its secret expires; a new one is refused", async () => {
    const value = await signSecret({ expiresAt: Math.floor(Date.now() / 1000) + 2 });
    const ws = await accepted(await upgradeWith({ query: `client_secret=${value}` }));
    ws.send(create("first"));
    expect((await ws.turn(0)).at(-1)?.type).toBe("response.completed");
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    ws.send(create("after expiry"));
    expect((await ws.turn(1)).at(-1)?.type).toBe("response.completed");
    ws.close();
    const late = await upgradeWith({ query: `client_secret=${value}` });
    expect(late.status).toBe(401);
    expect((await errorOf(late)).code).toBe("client_secret_expired");
  });
});
