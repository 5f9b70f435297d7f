/**
 * OpenAI `namespace` tools and hosted tools on the Anthropic route (src/upstream/tool-namespaces.ts,
 * anthropic/request.ts, messages.ts, synthesizer.ts): a namespace's functions are offered flattened
 * (`ns__name`), Claude's call of one comes back as a `function_call` with `name` and `namespace`,
 * and a client's `function_call` with `namespace` goes back flattened; a `custom` member, a name
 * Claude refuses and a hosted tool are 400s naming them — unless the route's operator chose
 * `hosted_tools: "omit"`, which sends the turn without the hosted tool.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { StoredItem } from "../../../../src/protocol/items.ts";
import { AnthropicMessagesUpstream } from "../../../../src/upstream/anthropic/adapter.ts";
import { toAnthropicRequest } from "../../../../src/upstream/anthropic/request.ts";
import type { UpstreamEvent } from "../../../../src/upstream/upstream.ts";

const BASE = "https://api.anthropic.test/v1";
const CACHE = { breakpoints: false, minTokens: 0 };

/** The tools Codex CLI sends, shortened (test/support/codex-notes.md). */
const NAMESPACE = {
  type: "namespace",
  name: "multi_agent_v1",
  description: "Sub-agents.",
  tools: [
    { type: "function", name: "spawn_agent", description: "Spawn one.", parameters: { type: "object" } },
    { type: "function", name: "wait", parameters: { type: "object" }, strict: true },
  ],
};
const EXEC = { type: "function", name: "exec_command", parameters: { type: "object" } };

const item = (fields: Record<string, unknown>) => fields as unknown as StoredItem;

const request = (
  settings: Record<string, unknown>,
  input: StoredItem[] = [item({ type: "message", role: "user", content: "hi" })],
) => ({
  model: "claude-x",
  input,
  newInput: [],
  previousResponseId: null,
  responseId: "resp_1",
  settings,
  sessionKey: "s",
});

function sse(events: Array<Record<string, unknown>>): string {
  return events.map((event) => `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`).join("");
}

describe("namespace tools on an Anthropic route", () => {
  it("offers a namespace's functions flattened and sends a namespaced call back flattened", () => {
    const input = [
      item({ type: "message", role: "user", content: "spawn" }),
      item({
        type: "function_call",
        call_id: "toolu_1",
        namespace: "multi_agent_v1",
        name: "spawn_agent",
        arguments: "{}",
      }),
      item({ type: "function_call_output", call_id: "toolu_1", output: "ok" }),
    ];
    const body = toAnthropicRequest(request({ tools: [EXEC, NAMESPACE] }, input), BASE, CACHE);
    expect(body.tools).toEqual([
      { name: "exec_command", input_schema: { type: "object" } },
      { name: "multi_agent_v1__spawn_agent", description: "Spawn one.", input_schema: { type: "object" } },
      { name: "multi_agent_v1__wait", input_schema: { type: "object" }, strict: true },
    ]);
    expect(body.messages[1]?.content[0]).toEqual({
      type: "tool_use",
      id: "toolu_1",
      name: "multi_agent_v1__spawn_agent",
      input: {},
    });
  });

  it("refuses a custom member, a flattened name Claude refuses and a duplicate, naming them", () => {
    const refusal = (tools: unknown[]) =>
      new AnthropicMessagesUpstream({ baseUrl: BASE, apiKey: null }).refusal({ tools: tools as never });
    const custom = refusal([{ ...NAMESPACE, tools: [{ type: "custom", name: "patch" }] }]);
    expect(custom).toMatchObject({ status: 400, param: "tools[0].tools[0]" });
    expect(custom?.message).toContain("A tool of type 'custom' in namespace 'multi_agent_v1'");
    const long = refusal([{ ...NAMESPACE, name: "n".repeat(120) }]);
    expect(long).toMatchObject({ status: 400, param: "tools[0].tools[0]" });
    expect(long?.message).toContain("^[a-zA-Z0-9_-]{1,128}$");
    const twice = refusal([{ type: "function", name: "multi_agent_v1__wait" }, NAMESPACE]);
    expect(twice).toMatchObject({ status: 400, param: "tools[1].tools[1]" });
    expect(refusal([EXEC, NAMESPACE])).toBeNull();
  });

  it("maps Claude's call of a flattened function to a function_call with name and namespace", async () => {
    const stream = sse([
      { type: "message_start", message: { id: "msg_1", model: "claude-x", usage: { input_tokens: 5 } } },
      {
        type: "content_block_start",
        index: 0,
        content_block: { type: "tool_use", id: "toolu_9", name: "multi_agent_v1__spawn_agent", input: {} },
      },
      { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: "{}" } },
      { type: "content_block_stop", index: 0 },
      {
        type: "content_block_start",
        index: 1,
        content_block: { type: "tool_use", id: "toolu_10", name: "exec_command", input: {} },
      },
      { type: "content_block_stop", index: 1 },
      { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 3 } },
      { type: "message_stop" },
    ]);
    const upstream = new AnthropicMessagesUpstream({
      baseUrl: BASE,
      apiKey: null,
      fetch: async () => new Response(stream, { headers: { "content-type": "text/event-stream" } }),
    });
    const opened = await upstream.open(request({ tools: [EXEC, NAMESPACE] }), new AbortController().signal);
    const events: UpstreamEvent[] = [opened.first];
    for await (const event of opened.rest) events.push(event);
    const added = events.find((event) => event.type === "response.output_item.added") as unknown as {
      item: unknown;
    };
    expect(added.item).toMatchObject({ name: "spawn_agent", namespace: "multi_agent_v1" });
    const done = events.find((event) => event.type === "response.function_call_arguments.done");
    expect(done).toMatchObject({ name: "spawn_agent" });
    const final = events.at(-1) as unknown as { response: { output: Array<Record<string, unknown>> } };
    expect(final.response.output[0]).toMatchObject({
      type: "function_call",
      call_id: "toolu_9",
      name: "spawn_agent",
      namespace: "multi_agent_v1",
      arguments: "{}",
    });
    expect(final.response.output[1]).toMatchObject({ name: "exec_command" });
    expect(final.response.output[1]).not.toHaveProperty("namespace");
  });
});

describe("hosted tools on an Anthropic route", () => {
  it("refuses web_search by default and leaves it out with hosted_tools omit", async () => {
    const tools = [EXEC, { type: "web_search" }] as never;
    const refusing = new AnthropicMessagesUpstream({ baseUrl: BASE, apiKey: null });
    expect(refusing.refusal({ tools })).toMatchObject({ status: 400, param: "tools[1].type" });
    const bodies: string[] = [];
    const omitting = new AnthropicMessagesUpstream({
      baseUrl: BASE,
      apiKey: null,
      omitHostedTools: true,
      fetch: async (_url, init) => {
        bodies.push(String(init?.body));
        return new Response("", { status: 500 });
      },
    });
    expect(omitting.refusal({ tools })).toBeNull();
    // A client-run tool the route cannot serve is still refused.
    expect(omitting.refusal({ tools: [{ type: "custom", name: "patch" }] as never })).toMatchObject({
      status: 400,
    });
    await expect(omitting.open(request({ tools }), new AbortController().signal)).rejects.toThrow();
    expect(JSON.parse(bodies[0] ?? "{}").tools).toEqual([
      { name: "exec_command", input_schema: { type: "object" } },
    ]);
  });
});

describe("Codex CLI's real tools (test/fixtures/codex/frames.jsonl)", () => {
  const frame = JSON.parse(readFileSync("test/fixtures/codex/frames.jsonl", "utf8").split("\n")[0] ?? "{}");
  const tools = frame.tools as never;

  it("are refused for web_search alone by default, and served whole but web_search with hosted_tools omit", () => {
    const refusal = new AnthropicMessagesUpstream({ baseUrl: BASE, apiKey: null }).refusal({ tools });
    expect(refusal).toMatchObject({ status: 400, param: "tools[8].type" });
    expect(refusal?.message).toContain("'web_search'");
    const omitting = new AnthropicMessagesUpstream({ baseUrl: BASE, apiKey: null, omitHostedTools: true });
    expect(omitting.refusal({ tools })).toBeNull();
    const body = toAnthropicRequest(request({ tools }), BASE, CACHE, true);
    expect(body.tools?.map((tool) => tool.name)).toEqual([
      "exec_command",
      "write_stdin",
      "request_user_input",
      "view_image",
      "multi_agent_v1__close_agent",
      "multi_agent_v1__resume_agent",
      "multi_agent_v1__send_input",
      "multi_agent_v1__spawn_agent",
      "multi_agent_v1__wait_agent",
      "get_goal",
      "create_goal",
      "update_goal",
    ]);
  });
});
