/**
 * What a route cannot serve is refused before the turn (src/upstream/route-capabilities.ts,
 * src/upstream/router.ts): on a Chat Completions route, `prompt`, `image` and every tool but
 * `function` are 400s naming them; Responses routes take everything; a model whose fallback chain
 * holds a Chat Completions route is refused what that route cannot serve.
 */
import { describe, expect, it } from "vitest";
import { ApiError } from "../../../src/protocol/errors.ts";
import { refuseUnservable } from "../../../src/upstream/route-capabilities.ts";
import { UpstreamRouter } from "../../../src/upstream/router.ts";
import { parseRoutes } from "../../../src/upstream/routes.ts";
import type { Upstream } from "../../../src/upstream/upstream.ts";

function refusal(run: () => unknown) {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return { status: error.status, ...error.toBody() };
    throw error;
  }
  return null;
}

const FUNCTION = { type: "function", name: "f", parameters: {} };

describe("refuseUnservable", () => {
  it("lets Responses routes serve every setting and tool type", () => {
    for (const api of ["responses-http", "responses-ws"] as const) {
      const settings = { prompt: { id: "pmpt_1" }, image: {}, tools: [FUNCTION, { type: "mcp" }] };
      expect(refusal(() => refuseUnservable(api, "m", settings))).toBeNull();
    }
  });

  it.each([
    ["prompt", { prompt: { id: "pmpt_1" } }],
    ["image", { image: { context_compression: "disabled" } }],
  ])("refuses %s on a Chat Completions route", (name, settings) => {
    expect(refusal(() => refuseUnservable("chat-completions", "llama", settings))).toEqual({
      status: 400,
      type: "invalid_request_error",
      code: "unsupported_parameter",
      message: `Unsupported parameter: '${name}' is not supported with model 'llama', which is served over Chat Completions.`,
      param: name,
    });
  });

  it.each(["web_search", "mcp", "custom", "namespace"])(
    "refuses a %s tool on a Chat Completions route, naming tools[i].type",
    (type) => {
      const settings = { tools: [FUNCTION, { type }] };
      expect(refusal(() => refuseUnservable("chat-completions", "llama", settings))).toMatchObject({
        status: 400,
        code: "unsupported_value",
        param: "tools[1].type",
        message: expect.stringContaining(`tool type '${type}'`),
      });
    },
  );

  it("lets a Chat Completions route serve function tools and prompt caching", () => {
    const settings = { tools: [FUNCTION], prompt_cache_options: { mode: "implicit" }, prompt: null };
    expect(refusal(() => refuseUnservable("chat-completions", "llama", settings))).toBeNull();
  });
});

describe("UpstreamRouter.upstreamFor with a turn's settings", () => {
  const routes = parseRoutes(
    JSON.stringify([
      { model: "gpt-*", api: "responses-ws", base_url: "https://openai.example/v1" },
      { model: "gpt-*", api: "chat-completions", base_url: "https://fallback.example/v1" },
      { model: "solo", api: "responses-http", base_url: "https://openai.example/v1" },
    ]),
    { baseUrl: "https://default.example/v1", apiKey: null, api: "responses-http" },
    () => undefined,
  );
  const router = new UpstreamRouter(
    routes,
    (): Upstream => ({ open: () => Promise.reject(new Error("unused")) }),
  );

  it("refuses what any route of the chain cannot serve, and serves it on a chain that can", () => {
    const settings = { prompt: { id: "pmpt_1" } };
    expect(refusal(() => router.upstreamFor("gpt-x", settings))).toMatchObject({ param: "prompt" });
    expect(refusal(() => router.upstreamFor("solo", settings))).toBeNull();
    expect(refusal(() => router.upstreamFor("gpt-x"))).toBeNull();
  });
});
