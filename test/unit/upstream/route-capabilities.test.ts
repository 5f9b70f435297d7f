/**
 * What a route cannot serve is refused before the turn (src/upstream/route-capabilities.ts, asked
 * through `Upstream.refusal`): on Chat Completions, Anthropic Messages and Gemini routes, `prompt`,
 * `image` and every tool but `function` (and, on Anthropic and Gemini, `namespace`) are 400s
 * naming them (Anthropic and Gemini also `prompt_cache_options`; a route may omit hosted tools); Responses routes take everything; the adapters answer it; a model's
 * route chain answers its first route's refusal.
 */
import { describe, expect, it } from "vitest";
import { AnthropicMessagesUpstream } from "../../../src/upstream/anthropic/adapter.ts";
import { ChatCompletionsUpstream } from "../../../src/upstream/chat/adapter.ts";
import { capabilityRefusal } from "../../../src/upstream/route-capabilities.ts";
import { createAdapter, UpstreamRouter } from "../../../src/upstream/router.ts";
import { parseRoutes, UPSTREAM_APIS } from "../../../src/upstream/routes.ts";
import type { UpstreamError } from "../../../src/upstream/upstream.ts";

const FUNCTION = { type: "function", name: "f", parameters: {} };

/** The refusal as a client reads it. */
function shown(error: UpstreamError | null | undefined) {
  if (!error) return null;
  return {
    status: error.status,
    type: error.type,
    code: error.code,
    message: error.message,
    param: error.param,
  };
}

describe("capabilityRefusal", () => {
  it("lets Responses routes serve every setting and tool type", () => {
    for (const api of ["responses-http", "responses-ws"] as const) {
      const settings = {
        prompt: { id: "pmpt_1" },
        image: {},
        prompt_cache_options: { mode: "explicit" },
        tools: [FUNCTION, { type: "mcp" }],
      };
      expect(capabilityRefusal(api, settings)).toBeNull();
    }
  });

  it.each([
    ["chat-completions", "Chat Completions", "prompt", { prompt: { id: "pmpt_1" } }],
    ["chat-completions", "Chat Completions", "image", { image: { context_compression: "disabled" } }],
    ["anthropic-messages", "Anthropic Messages", "prompt", { prompt: { id: "pmpt_1" } }],
    ["anthropic-messages", "Anthropic Messages", "image", { image: { context_compression: "auto" } }],
    [
      "anthropic-messages",
      "Anthropic Messages",
      "prompt_cache_options",
      { prompt_cache_options: { mode: "implicit" } },
    ],
  ] as const)("refuses on a %s route (%s) the setting %s", (api, name, setting, settings) => {
    expect(shown(capabilityRefusal(api, { model: "llama", ...settings }))).toEqual({
      status: 400,
      type: "invalid_request_error",
      code: "unsupported_parameter",
      message: `Unsupported parameter: '${setting}' is not supported with model 'llama', which is served over ${name}.`,
      param: setting,
    });
  });

  it("refuses on a Chat Completions route every tool type but function, naming tools[i].type", () => {
    for (const type of ["web_search", "mcp", "custom", "namespace", "file_search"]) {
      const refused = capabilityRefusal("chat-completions", { tools: [FUNCTION, { type }] });
      expect(shown(refused)).toMatchObject({
        status: 400,
        code: "unsupported_value",
        param: "tools[1].type",
      });
      expect(refused?.message).toContain(`tool type '${type}' is not supported with this model`);
      expect(refused?.message).toContain("Supported values are: 'function'.");
    }
  });

  it.each(["anthropic-messages", "gemini"] as const)(
    "refuses on a %s route every tool type but function and namespace, unless the route omits it",
    (api) => {
      expect(capabilityRefusal(api, { tools: [FUNCTION, { type: "namespace" }] })).toBeNull();
      for (const type of ["web_search", "mcp", "custom", "file_search"]) {
        const refused = capabilityRefusal(api, { tools: [FUNCTION, { type }] });
        expect(shown(refused)).toMatchObject({
          status: 400,
          code: "unsupported_value",
          param: "tools[1].type",
        });
        expect(refused?.message).toContain(`tool type '${type}' is not supported with this model`);
        expect(refused?.message).toContain("Supported values are: 'function', 'namespace'.");
      }
      const omitted = new Set(["web_search"]);
      expect(capabilityRefusal(api, { tools: [FUNCTION, { type: "web_search" }] }, omitted)).toBeNull();
    },
  );

  it("lets a Chat Completions route serve function tools and prompt caching; null settings are absent", () => {
    const settings = { tools: [FUNCTION], prompt_cache_options: { mode: "implicit" }, prompt: null };
    expect(capabilityRefusal("chat-completions", settings)).toBeNull();
    expect(capabilityRefusal("anthropic-messages", { tools: [FUNCTION], image: null })).toBeNull();
  });
});

describe("the adapters answer their route's capabilities (Upstream.refusal)", () => {
  const options = { baseUrl: "https://up.example/v1", apiKey: null };

  it("the Chat Completions adapter refuses a hosted tool and prompt", () => {
    const chat = new ChatCompletionsUpstream(options);
    expect(chat.refusal({ tools: [{ type: "web_search" }] })?.param).toBe("tools[0].type");
    expect(chat.refusal({ prompt: { id: "pmpt_1" } })?.param).toBe("prompt");
    expect(chat.refusal({ tools: [FUNCTION] })).toBeNull();
  });

  it("the Anthropic adapter refuses a hosted tool and prompt before its own settings checks", () => {
    const claude = new AnthropicMessagesUpstream(options);
    expect(claude.refusal({ tools: [{ type: "web_search" }] })?.param).toBe("tools[0].type");
    expect(claude.refusal({ prompt: { id: "pmpt_1" }, top_logprobs: 2 })?.param).toBe("prompt");
    expect(claude.refusal({ top_logprobs: 2 })?.param).toBe("top_logprobs");
    expect(claude.refusal({ tools: [FUNCTION] })).toBeNull();
  });

  it("every wire API's adapter refuses what its capabilities say it cannot serve", () => {
    const settings = { prompt: { id: "pmpt_1" } };
    for (const api of UPSTREAM_APIS) {
      const [route] = parseRoutes(
        JSON.stringify([{ model: "*", api, base_url: "https://up.example/v1" }]),
        { baseUrl: "https://default.example/v1", apiKey: null, api: "responses-http" },
        () => undefined,
      );
      const adapter = createAdapter(route!);
      const expected = capabilityRefusal(api, settings);
      expect(shown(adapter.refusal?.(settings)), api).toEqual(shown(expected));
      adapter.dispose?.();
    }
  });
});

describe("a model's route chain", () => {
  const routes = parseRoutes(
    JSON.stringify([
      { model: "gpt-*", api: "responses-ws", base_url: "https://openai.example/v1" },
      { model: "gpt-*", api: "chat-completions", base_url: "https://fallback.example/v1" },
      { model: "llama", api: "chat-completions", base_url: "https://vllm.example/v1" },
    ]),
    { baseUrl: "https://default.example/v1", apiKey: null, api: "responses-http" },
    () => undefined,
  );
  const router = new UpstreamRouter(routes);

  it("answers its first route's refusal", () => {
    const settings = { model: "x", prompt: { id: "pmpt_1" } };
    expect(router.upstreamFor("gpt-x").refusal?.(settings)).toBeNull();
    expect(router.upstreamFor("llama").refusal?.(settings)?.param).toBe("prompt");
  });
});
