/**
 * OpenAI `namespace` tools and hosted tools on the Gemini route (src/upstream/tool-namespaces.ts,
 * gemini/request.ts, contents.ts, synthesizer.ts): a namespace's functions are declared flattened
 * (`ns__name`), Gemini's call of one comes back as a `function_call` with `name` and `namespace`,
 * and a client's `function_call` with `namespace` (and its `functionResponse`) goes back under the
 * flattened name; a `custom` member and a name Gemini refuses are 400s naming them; a hosted tool
 * is refused unless the route's operator chose `hosted_tools: "omit"`.
 */
import { describe, expect, it } from "vitest";
import type { StoredItem } from "../../../../src/protocol/items.ts";
import { GeminiUpstream } from "../../../../src/upstream/gemini/adapter.ts";
import { toGeminiRequest } from "../../../../src/upstream/gemini/request.ts";
import { createAdapter } from "../../../../src/upstream/router.ts";
import { parseRoutes } from "../../../../src/upstream/routes.ts";
import type { UpstreamEvent } from "../../../../src/upstream/upstream.ts";

const BASE = "https://generativelanguage.test/v1beta";

const NAMESPACE = {
  type: "namespace",
  name: "multi_agent_v1",
  description: "Sub-agents.",
  tools: [
    { type: "function", name: "spawn_agent", description: "Spawn one.", parameters: { type: "object" } },
  ],
};
const EXEC = { type: "function", name: "exec_command", parameters: { type: "object" } };

const item = (fields: Record<string, unknown>) => fields as unknown as StoredItem;

const request = (
  settings: Record<string, unknown>,
  input: StoredItem[] = [item({ type: "message", role: "user", content: "hi" })],
) => ({
  model: "gemini-3-flash",
  input,
  newInput: [],
  previousResponseId: null,
  responseId: "resp_1",
  settings,
  sessionKey: "s",
});

describe("namespace tools on a Gemini route", () => {
  it("declares a namespace's functions flattened and sends a namespaced call and its answer back flattened", () => {
    const input = [
      item({ type: "message", role: "user", content: "spawn" }),
      item({
        type: "function_call",
        call_id: "c1",
        namespace: "multi_agent_v1",
        name: "spawn_agent",
        arguments: "{}",
      }),
      item({ type: "function_call_output", call_id: "c1", output: "ok" }),
    ];
    const body = toGeminiRequest(request({ tools: [EXEC, NAMESPACE] }, input), BASE);
    expect(body.tools).toEqual([
      {
        functionDeclarations: [
          { name: "exec_command", parametersJsonSchema: { type: "object" } },
          {
            name: "multi_agent_v1__spawn_agent",
            description: "Spawn one.",
            parametersJsonSchema: { type: "object" },
          },
        ],
      },
    ]);
    expect(body.contents[1]?.parts[0]).toMatchObject({
      functionCall: { id: "c1", name: "multi_agent_v1__spawn_agent" },
    });
    expect(body.contents[2]?.parts[0]).toMatchObject({
      functionResponse: { id: "c1", name: "multi_agent_v1__spawn_agent" },
    });
  });

  it("refuses a custom member and a flattened name Gemini refuses, naming them", () => {
    const up = new GeminiUpstream({ baseUrl: BASE, apiKey: null });
    const custom = up.refusal({
      tools: [{ ...NAMESPACE, tools: [{ type: "custom", name: "patch" }] }] as never,
    });
    expect(custom).toMatchObject({ status: 400, param: "tools[0].tools[0]" });
    expect(custom?.message).toContain("'custom' in namespace 'multi_agent_v1'");
    // 64 characters at most (https://ai.google.dev/api/caching#FunctionDeclaration).
    const long = up.refusal({ tools: [{ ...NAMESPACE, name: "n".repeat(60) }] as never });
    expect(long).toMatchObject({ status: 400, param: "tools[0].tools[0]" });
    expect(up.refusal({ tools: [EXEC, NAMESPACE] as never })).toBeNull();
  });

  it("maps Gemini's call of a flattened function to a function_call with name and namespace", async () => {
    const chunk = {
      candidates: [
        {
          content: {
            role: "model",
            parts: [{ functionCall: { id: "c9", name: "multi_agent_v1__spawn_agent", args: { n: 1 } } }],
          },
          index: 0,
          finishReason: "STOP",
        },
      ],
    };
    const up = new GeminiUpstream({
      baseUrl: BASE,
      apiKey: null,
      fetch: (async () =>
        new Response(`data: ${JSON.stringify(chunk)}\r\n\r\n`, {
          headers: { "content-type": "text/event-stream" },
        })) as typeof fetch,
    });
    const opened = await up.open(request({ tools: [EXEC, NAMESPACE] }), new AbortController().signal);
    const events: UpstreamEvent[] = [opened.first];
    for await (const event of opened.rest) events.push(event);
    const final = events.at(-1) as unknown as { response: { output: Array<Record<string, unknown>> } };
    expect(final.response.output[0]).toMatchObject({
      type: "function_call",
      call_id: "c9",
      name: "spawn_agent",
      namespace: "multi_agent_v1",
      arguments: '{"n":1}',
    });
  });
});

describe("hosted tools on a Gemini route", () => {
  it("refuses web_search by default; a route with hosted_tools omit sends the turn without it", () => {
    const tools = [EXEC, { type: "web_search" }] as never;
    const route = (extra: Record<string, unknown>) =>
      parseRoutes(
        JSON.stringify([{ model: "gemini-*", api: "gemini", base_url: BASE, ...extra }]),
        { baseUrl: BASE, apiKey: null, api: "responses-http" },
        () => undefined,
      )[0];
    const refusing = route({});
    const omitting = route({ hosted_tools: "omit" });
    if (!refusing || !omitting) throw new Error("no route");
    expect(omitting.hostedTools).toBe("omit");
    expect(createAdapter(refusing).refusal?.({ tools })).toMatchObject({
      status: 400,
      param: "tools[1].type",
    });
    expect(createAdapter(omitting).refusal?.({ tools })).toBeNull();
    const body = toGeminiRequest(request({ tools }), BASE, true);
    expect(body.tools).toEqual([
      { functionDeclarations: [{ name: "exec_command", parametersJsonSchema: { type: "object" } }] },
    ]);
    expect(() =>
      parseRoutes(
        JSON.stringify([{ model: "x", api: "chat-completions", base_url: BASE, hosted_tools: "omit" }]),
        { baseUrl: BASE, apiKey: null, api: "responses-http" },
        () => undefined,
      ),
    ).toThrow(/hosted_tools applies/);
  });
});
