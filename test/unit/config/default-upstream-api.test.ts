/**
 * The default route's wire API (issue #18.3): WebSocket mode for OpenAI's endpoint (the default
 * `UPSTREAM_BASE_URL`), HTTP/SSE for any other base URL, and `UPSTREAM_API` always wins.
 */
import { describe, expect, it } from "vitest";
import { defaultUpstreamApi, parseConfig } from "../../../src/config/config.ts";
import type { Env } from "../../../src/config/env.ts";

function apiOf(vars: Record<string, string>): string | undefined {
  return parseConfig({ ...vars } as unknown as Env).routes[0]?.api;
}

describe("default UPSTREAM_API", () => {
  it("is responses-ws for OpenAI's endpoint, also when UPSTREAM_BASE_URL is unset", () => {
    expect(apiOf({})).toBe("responses-ws");
    expect(apiOf({ UPSTREAM_BASE_URL: "https://api.openai.com/v1" })).toBe("responses-ws");
    expect(defaultUpstreamApi("https://api.openai.com/v1")).toBe("responses-ws");
  });

  it("is responses-http for any other base URL (not every server speaks WebSocket mode)", () => {
    expect(apiOf({ UPSTREAM_BASE_URL: "http://127.0.0.1:8000/v1" })).toBe("responses-http");
    expect(apiOf({ UPSTREAM_BASE_URL: "https://api.openai.com.example.net/v1" })).toBe("responses-http");
  });

  it("UPSTREAM_API overrides it either way", () => {
    expect(apiOf({ UPSTREAM_API: "responses-http" })).toBe("responses-http");
    expect(apiOf({ UPSTREAM_BASE_URL: "http://127.0.0.1:8000/v1", UPSTREAM_API: "responses-ws" })).toBe(
      "responses-ws",
    );
  });
});
