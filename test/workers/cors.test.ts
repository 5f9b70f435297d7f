/**
 * CORS (issue #16 item 3): preflights answered for every route without authentication, any origin
 * by default, errors readable cross-origin, a client secret as the bearer of HTTP calls (SSE
 * included), and `CORS_ALLOWED_ORIGINS` narrowing it.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { fetchWithEnv, mintSecret } from "../support/client-secrets.ts";
import { workerFetch } from "../support/ws-client.ts";

const PAGE = "https://agent.example";

function preflight(path: string, method: string, origin = PAGE, run = workerFetch): Promise<Response> {
  return run(path, {
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": method,
      "access-control-request-headers": "authorization, content-type, session-id, x-deltagate-timing",
    },
  });
}

describe("CORS, by default (any origin)", () => {
  it.each([
    ["/v1/responses", "POST"],
    ["/v1/responses/resp_x", "GET"],
    ["/v1/responses/resp_x", "DELETE"],
    ["/v1/responses/resp_x/cancel", "POST"],
    ["/v1/responses/resp_x/input_items", "GET"],
    ["/v1/models", "GET"],
    ["/v1/client_secrets", "POST"],
    ["/demo/client_secret", "POST"],
    ["/healthz", "GET"],
  ])("answers the preflight of %s %s without authentication", async (path, method) => {
    const res = await preflight(path, method);
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-allow-methods")).toContain(method);
    expect(res.headers.get("access-control-allow-headers")).toBe(
      "authorization,content-type,session-id,x-deltagate-timing",
    );
    expect(res.headers.get("access-control-allow-credentials")).toBeNull(); // bearer credentials, no cookies
    expect(Number(res.headers.get("access-control-max-age"))).toBeGreaterThan(0);
  });

  it("makes /healthz and a 401 readable cross-origin", async () => {
    const health = await workerFetch("/healthz", { headers: { origin: PAGE } });
    expect(health.headers.get("access-control-allow-origin")).toBe("*");
    const denied = await workerFetch("/v1/models", { headers: { origin: PAGE } });
    expect(denied.status).toBe(401);
    expect(denied.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("takes a client secret as the bearer of HTTP calls and streams SSE cross-origin, exposing Server-Timing", async () => {
    const { value } = await mintSecret();
    const res = await workerFetch("/v1/responses", {
      method: "POST",
      headers: {
        origin: PAGE,
        authorization: `Bearer ${value}`,
        "content-type": "application/json",
        "x-deltagate-timing": "1",
      },
      body: JSON.stringify({ model: "deltagate-sim", input: "Say hello", stream: true }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-expose-headers")).toContain("server-timing");
    expect(res.headers.get("server-timing")).toContain("edge");
    const text = await res.text();
    expect(text).toContain("event: response.completed");
    const id = /"id":"(resp_[^"]+)"/.exec(text)?.[1];
    const read = await workerFetch(`/v1/responses/${id}`, {
      headers: { origin: PAGE, authorization: `Bearer ${value}` },
    });
    expect(read.status).toBe(200);
    expect(read.headers.get("access-control-allow-origin")).toBe("*");
  });
});

describe("CORS_ALLOWED_ORIGINS", () => {
  afterEach(() => vi.restoreAllMocks());
  const ALLOWED = { CORS_ALLOWED_ORIGINS: `${PAGE}, https://other.example:8443` };
  const run = (path: string, init?: RequestInit) => fetchWithEnv(ALLOWED, path, init);

  it("echoes an allowed origin (with Vary: Origin) and gives another one no CORS headers", async () => {
    const ok = await preflight("/v1/responses", "POST", PAGE, run);
    expect(ok.headers.get("access-control-allow-origin")).toBe(PAGE);
    expect(ok.headers.get("vary")).toContain("Origin");
    const other = await preflight("/v1/responses", "POST", "https://evil.example", run);
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("refuses a request from another origin with 403 origin_not_allowed, a WebSocket upgrade included", async () => {
    for (const init of [
      { headers: { origin: "https://evil.example" } },
      {
        headers: { origin: "https://evil.example", upgrade: "websocket", authorization: "Bearer dg-test-a" },
      },
    ]) {
      const res = await run("/v1/responses", init);
      expect(res.status).toBe(403);
      expect(res.webSocket).toBeNull();
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("origin_not_allowed");
    }
    // The Worker's own origin is always allowed; so is a request without Origin (a native app).
    const same = await run("/healthz", { headers: { origin: "http://deltagate.test" } });
    expect(same.status).toBe(200);
    expect((await run("/healthz")).status).toBe(200);
    const listed = await run("/healthz", { headers: { origin: "https://other.example:8443" } });
    expect(listed.headers.get("access-control-allow-origin")).toBe("https://other.example:8443");
  });

  it("refuses a list entry that is not an origin (a configuration error, reported without the request)", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {}); // the configuration error's log line
    const res = await fetchWithEnv({ CORS_ALLOWED_ORIGINS: "https://ok.example/path" }, "/healthz", {
      headers: { origin: PAGE },
    });
    expect(res.status).toBe(500);
  });
});
