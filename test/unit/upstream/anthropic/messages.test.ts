/**
 * Responses context → Anthropic messages (src/upstream/anthropic/messages.ts and request.ts):
 * roles alternate (same-role content merged), tool results open the next user message in call
 * order, thinking blocks go back byte-exact in their place, another provider's reasoning is left
 * out, and what the route cannot carry is a 400 naming it.
 */
import { describe, expect, it } from "vitest";
import type { StoredItem } from "../../../../src/protocol/items.ts";
import { toAnthropicConversation } from "../../../../src/upstream/anthropic/messages.ts";
import { toAnthropicRequest } from "../../../../src/upstream/anthropic/request.ts";
import { openThinking, sealThinking } from "../../../../src/upstream/anthropic/thinking-blocks.ts";
import { ORIGIN_FIELD } from "../../../../src/upstream/encrypted-reasoning.ts";
import { UpstreamError, type UpstreamRequest } from "../../../../src/upstream/upstream.ts";

const ORIGIN = "https://api.anthropic.com/v1";
const item = (fields: Record<string, unknown>, id = "x") => ({ id, ...fields }) as StoredItem;
const user = (text: string) =>
  item({ type: "message", role: "user", content: [{ type: "input_text", text }] });
const call = (callId: string) =>
  item({ type: "function_call", call_id: callId, name: "exec", arguments: '{"cmd":"ls"}' });
const output = (callId: string) =>
  item({ type: "function_call_output", call_id: callId, output: `out ${callId}` });
const blocks = [
  { type: "redacted_thinking" as const, data: "opaque==" },
  { type: "thinking" as const, thinking: "Let me think: ü, 🙂\n", signature: "c2lnbmF0dXJl" },
];

function request(input: StoredItem[], settings: UpstreamRequest["settings"] = {}): UpstreamRequest {
  return {
    model: "claude-x",
    input,
    newInput: [],
    previousResponseId: null,
    responseId: "r",
    settings,
    sessionKey: "s",
  };
}

describe("toAnthropicConversation", () => {
  it("round-trips thinking blocks byte-exact through encrypted_content", () => {
    expect(openThinking(sealThinking(blocks))).toEqual(blocks);
    expect(openThinking("gAAAA-openai-blob")).toBeNull();
  });

  it("answers parallel calls in call order right after them, and merges same-role content", () => {
    const reasoning = item({
      type: "reasoning",
      summary: [],
      encrypted_content: sealThinking(blocks),
      [ORIGIN_FIELD]: ORIGIN,
    });
    const { system, messages } = toAnthropicConversation(
      "Be brief.",
      [
        item({ type: "message", role: "developer", content: "Sandbox: on." }),
        user("a"),
        user("b"),
        reasoning,
        call("c1"),
        call("c2"),
        output("c2"),
        output("c1"),
        user("next"),
      ],
      ORIGIN,
    );
    expect(system).toEqual(["Be brief.", "Sandbox: on."]);
    expect(messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ],
      },
      {
        role: "assistant",
        content: [
          ...blocks,
          { type: "tool_use", id: "c1", name: "exec", input: { cmd: "ls" } },
          { type: "tool_use", id: "c2", name: "exec", input: { cmd: "ls" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "c1", content: "out c1" },
          { type: "tool_result", tool_use_id: "c2", content: "out c2" },
          { type: "text", text: "next" },
        ],
      },
    ]);
  });

  it("keeps call order when the outputs come in call order too", () => {
    const { messages } = toAnthropicConversation(
      null,
      [user("a"), call("c1"), call("c2"), output("c1"), output("c2")],
      ORIGIN,
    );
    expect(
      messages[2]?.content.map((block) => (block.type === "tool_result" ? block.tool_use_id : "")),
    ).toEqual(["c1", "c2"]);
  });

  it("leaves out reasoning another upstream issued or that carries no thinking block", () => {
    const foreign = item({
      type: "reasoning",
      summary: [],
      encrypted_content: sealThinking(blocks),
      [ORIGIN_FIELD]: "https://other/v1",
    });
    const bare = item({ type: "reasoning", summary: [] });
    const { messages } = toAnthropicConversation(
      null,
      [user("a"), foreign, bare, call("c1"), output("c1")],
      ORIGIN,
    );
    expect(JSON.stringify(messages)).not.toContain("thinking");
  });

  it("sends images inline or by URL and refuses what it cannot carry, naming it", () => {
    const { messages } = toAnthropicConversation(
      null,
      [
        item({
          type: "message",
          role: "user",
          content: [
            { type: "input_image", image_url: "data:image/png;base64,AAAA" },
            { type: "input_image", image_url: "https://example.com/a.png" },
          ],
        }),
      ],
      ORIGIN,
    );
    expect(messages[0]?.content).toEqual([
      { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
      { type: "image", source: { type: "url", url: "https://example.com/a.png" } },
    ]);
    expect(() =>
      toAnthropicConversation(
        null,
        [item({ type: "message", role: "user", content: [{ type: "input_image", file_id: "f" }] })],
        ORIGIN,
      ),
    ).toThrow(UpstreamError);
    expect(() => toAnthropicConversation(null, [item({ type: "web_search_call" })], ORIGIN)).toThrow(
      /web_search_call/,
    );
  });
});

describe("toAnthropicRequest", () => {
  const cache = { breakpoints: false, minTokens: 1024 };

  it("maps the settings: max_tokens, thinking budget, tool_choice, parallel calls, metadata", () => {
    const body = toAnthropicRequest(
      request([user("a")], {
        tools: [{ type: "function", name: "exec", parameters: { type: "object" }, strict: false }],
        tool_choice: "required",
        parallel_tool_calls: false,
        reasoning: { effort: "medium" },
        temperature: 1,
        safety_identifier: "u-1",
      }),
      ORIGIN,
      cache,
    );
    expect(body).toMatchObject({
      model: "claude-x",
      max_tokens: 8192 + 8192,
      thinking: { type: "enabled", budget_tokens: 8192 },
      tools: [{ name: "exec", input_schema: { type: "object" } }],
      tool_choice: { type: "any", disable_parallel_tool_use: true },
      temperature: 1,
      metadata: { user_id: "u-1" },
      stream: true,
    });
    const capped = toAnthropicRequest(
      request([user("a")], { max_output_tokens: 3000, reasoning: { effort: "high" } }),
      ORIGIN,
      cache,
    );
    expect(capped).toMatchObject({ max_tokens: 3000, thinking: { budget_tokens: 2999 } });
    expect(toAnthropicRequest(request([user("a")], {}), ORIGIN, cache).max_tokens).toBe(8192);
  });

  it("refuses a setting it cannot honour with a 400 naming it", () => {
    const refused = (settings: UpstreamRequest["settings"]) => {
      try {
        toAnthropicRequest(request([user("a")], settings), ORIGIN, cache);
      } catch (error) {
        return error instanceof UpstreamError ? { status: error.status, param: error.param } : null;
      }
      return null;
    };
    expect(refused({ top_logprobs: 2 })).toEqual({ status: 400, param: "top_logprobs" });
    expect(refused({ tools: [{ type: "web_search" }] })).toEqual({ status: 400, param: "tools[0]" });
    expect(refused({ text: { format: { type: "json_schema" } } })).toEqual({
      status: 400,
      param: "text.format",
    });
    expect(refused({ include: ["message.output_text.logprobs"] })).toEqual({ status: 400, param: "include" });
    expect(refused({ temperature: 1.5 })).toEqual({ status: 400, param: "temperature" });
    expect(refused({ max_output_tokens: 1000, reasoning: { effort: "low" } })).toEqual({
      status: 400,
      param: "max_output_tokens",
    });
    expect(refused({ include: ["reasoning.encrypted_content"], reasoning: { effort: "none" } })).toBeNull();
  });
});
