/**
 * Chat Completions request translation (https://platform.openai.com/docs/api-reference/chat/create), as pure functions: messages
 * from the full context (instructions, content parts, assistant + tool-call merging, tool
 * messages in call order right after their calls, dropped reasoning) and the settings mapping.
 */
import { describe, expect, it } from "vitest";
import type { StoredItem } from "../../../../src/protocol/items.ts";
import { toChatContent, toChatMessages } from "../../../../src/upstream/chat/messages.ts";
import { toChatRequest } from "../../../../src/upstream/chat/request.ts";
import { UpstreamError, type UpstreamRequest } from "../../../../src/upstream/upstream.ts";

function request(input: StoredItem[], settings: UpstreamRequest["settings"] = {}): UpstreamRequest {
  return {
    model: "sim-chat",
    input,
    newInput: input,
    previousResponseId: null,
    responseId: "resp_x",
    settings,
    sessionKey: "session-key-1",
  };
}

const user = (text: string, id = `msg_u_${text}`): StoredItem => ({
  type: "message",
  id,
  role: "user",
  content: [{ type: "input_text", text }],
});
const call = (callId: string, name = "exec_command"): StoredItem => ({
  type: "function_call",
  id: `fc_${callId}`,
  call_id: callId,
  name,
  arguments: `{"cmd":"${callId}"}`,
  status: "completed",
});
const output = (callId: string, out: StoredItem["output"] = `out ${callId}`): StoredItem => ({
  type: "function_call_output",
  id: `fco_${callId}`,
  call_id: callId,
  output: out,
});

describe("toChatMessages", () => {
  it("puts the current instructions first as the only system message, and none without them", () => {
    expect(toChatMessages("Be brief.", [user("hi")])).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "hi" },
    ]);
    expect(toChatMessages(null, [user("hi")])).toEqual([{ role: "user", content: "hi" }]);
    expect(toChatMessages(undefined, [user("hi")])).toEqual([{ role: "user", content: "hi" }]);
  });

  it("keeps message roles and converts text, image (with detail) and file parts", () => {
    const items: StoredItem[] = [
      { type: "message", id: "msg_d", role: "developer", content: "dev rules" },
      { type: "message", id: "msg_s", role: "system", content: [{ type: "input_text", text: "sys" }] },
      {
        type: "message",
        id: "msg_u",
        role: "user",
        content: [
          { type: "input_text", text: "look" },
          { type: "input_image", image_url: "https://example.test/a.png", detail: "high" },
          { type: "input_image", image_url: "data:image/png;base64,AAAA" },
          { type: "input_file", file_data: "data:application/pdf;base64,AAAA", filename: "a.pdf" },
          { type: "input_file", file_id: "file-123" },
        ],
      },
    ];
    expect(toChatMessages(null, items)).toEqual([
      { role: "developer", content: "dev rules" },
      { role: "system", content: "sys" },
      {
        role: "user",
        content: [
          { type: "text", text: "look" },
          { type: "image_url", image_url: { url: "https://example.test/a.png", detail: "high" } },
          { type: "image_url", image_url: { url: "data:image/png;base64,AAAA", detail: "auto" } },
          { type: "file", file: { file_data: "data:application/pdf;base64,AAAA", filename: "a.pdf" } },
          { type: "file", file: { file_id: "file-123" } },
        ],
      },
    ]);
  });

  it("joins an assistant message's output_text parts and maps refusal parts to `refusal`", () => {
    const items: StoredItem[] = [
      user("q"),
      {
        type: "message",
        id: "msg_a",
        role: "assistant",
        status: "completed",
        content: [
          { type: "output_text", text: "Hello, ", annotations: [] },
          { type: "output_text", text: "world", annotations: [] },
        ],
      },
      {
        type: "message",
        id: "msg_r",
        role: "assistant",
        content: [{ type: "refusal", refusal: "I can't help with that." }],
      },
    ];
    expect(toChatMessages(null, items)).toEqual([
      { role: "user", content: "q" },
      { role: "assistant", content: "Hello, world" },
      { role: "assistant", content: "", refusal: "I can't help with that." },
    ]);
  });

  it("merges consecutive calls and the preceding assistant message, with outputs in call order right after", () => {
    const items: StoredItem[] = [
      user("go"),
      { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "opaque" },
      {
        type: "message",
        id: "msg_a",
        role: "assistant",
        content: [{ type: "output_text", text: "Running three.", annotations: [] }],
      },
      { type: "reasoning", id: "rs_2", summary: [] },
      call("c1"),
      call("c2"),
      { type: "reasoning", id: "rs_3", summary: [] },
      call("c3"),
      // the client answers in reverse order, with a text part list for one of them
      output("c3"),
      output("c2", [
        { type: "input_text", text: "two " },
        { type: "input_text", text: "parts" },
      ]),
      output("c1"),
      { type: "compaction", id: "cmp_1", encrypted_content: "x" },
      user("next"),
    ];
    const messages = toChatMessages("sys", items);
    expect(messages).toEqual([
      { role: "system", content: "sys" },
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: "Running three.",
        tool_calls: ["c1", "c2", "c3"].map((id) => ({
          id,
          type: "function",
          function: { name: "exec_command", arguments: `{"cmd":"${id}"}` },
        })),
      },
      { role: "tool", tool_call_id: "c1", content: "out c1" },
      { role: "tool", tool_call_id: "c2", content: "two parts" },
      { role: "tool", tool_call_id: "c3", content: "out c3" },
      { role: "user", content: "next" },
    ]);
    // Deltagate's item ids never reach the upstream.
    expect(JSON.stringify(messages)).not.toMatch(/msg_|fc_|fco_|rs_|cmp_/);
  });

  it("keeps sequential tool rounds as separate assistant messages with null content", () => {
    const messages = toChatMessages(null, [user("go"), call("a"), output("a"), call("b"), output("b")]);
    expect(messages.map((m) => [m.role, "tool_calls" in m ? m.tool_calls?.map((c) => c.id) : null])).toEqual([
      ["user", null],
      ["assistant", ["a"]],
      ["tool", null],
      ["assistant", ["b"]],
      ["tool", null],
    ]);
    expect(messages[1]).toMatchObject({ role: "assistant", content: null });
  });

  it("places outputs after their calls even when user messages come between", () => {
    const messages = toChatMessages(null, [
      user("go"),
      call("a"),
      call("b"),
      output("b"),
      user("wait"),
      output("a"),
    ]);
    expect(messages.map((m) => (m.role === "tool" ? `tool:${m.tool_call_id}` : m.role))).toEqual([
      "user",
      "assistant",
      "tool:a",
      "tool:b",
      "user",
    ]);
  });

  it("rejects content parts Chat Completions cannot carry with a 400 UpstreamError", () => {
    const image = {
      type: "message",
      id: "msg_i",
      role: "user",
      content: [{ type: "input_image", file_id: "file-1" }],
    } as StoredItem;
    const error = (() => {
      try {
        toChatMessages(null, [image]);
      } catch (cause) {
        return cause;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ status: 400, code: "unsupported_content" });
  });
});

describe("toChatRequest", () => {
  const tools = [
    {
      type: "function",
      name: "exec_command",
      description: "Runs a command.",
      parameters: { type: "object", properties: { cmd: { type: "string" } } },
      strict: false,
    },
  ];

  it("maps settings to their Chat Completions names and always streams with usage", () => {
    const body = toChatRequest(
      request([user("hi")], {
        instructions: "Be brief.",
        tools,
        tool_choice: { type: "function", name: "exec_command" },
        parallel_tool_calls: false,
        text: {
          format: { type: "json_schema", name: "answer", schema: { type: "object" }, strict: true },
        },
        max_output_tokens: 256,
        temperature: 0.2,
        top_p: 0.9,
        presence_penalty: 0.5,
        frequency_penalty: -0.25,
        reasoning: { effort: "low", summary: "auto" },
        user: "u-1",
        safety_identifier: "safe-1",
        truncation: "auto",
        include: ["reasoning.encrypted_content"],
        max_tool_calls: 3,
      }),
    );
    expect(body).toEqual({
      model: "sim-chat",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "hi" },
      ],
      stream: true,
      stream_options: { include_usage: true },
      tools: [
        {
          type: "function",
          function: {
            name: "exec_command",
            description: "Runs a command.",
            parameters: { type: "object", properties: { cmd: { type: "string" } } },
            strict: false,
          },
        },
      ],
      tool_choice: { type: "function", function: { name: "exec_command" } },
      parallel_tool_calls: false,
      response_format: {
        type: "json_schema",
        json_schema: { name: "answer", schema: { type: "object" }, strict: true },
      },
      max_completion_tokens: 256,
      temperature: 0.2,
      top_p: 0.9,
      presence_penalty: 0.5,
      frequency_penalty: -0.25,
      reasoning_effort: "low",
      user: "u-1",
      safety_identifier: "safe-1",
      prompt_cache_key: "session-key-1",
    });
  });

  it("passes tool_choice strings, maps json_object, keeps a client prompt_cache_key", () => {
    const body = toChatRequest(
      request([user("hi")], {
        tools,
        tool_choice: "required",
        text: { format: { type: "json_object" } },
        prompt_cache_key: "client-key",
      }),
    );
    expect(body.tool_choice).toBe("required");
    expect(body.response_format).toEqual({ type: "json_object" });
    expect(body.prompt_cache_key).toBe("client-key");
    expect(toChatRequest(request([user("hi")], { text: { format: { type: "text" } } })).response_format).toBe(
      undefined,
    );
  });

  it("refuses a tool that is not a function rather than dropping it (route-capabilities.ts refuses it first)", () => {
    const error = (() => {
      try {
        toChatRequest(request([user("hi")], { tools: [...tools, { type: "web_search" }] }));
      } catch (caught) {
        return caught;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ status: 400, code: "unsupported_value", param: "tools[1]" });
  });

  it("forwards prompt_cache_options and prompt_cache_retention, the same parameters in Chat Completions", () => {
    const body = toChatRequest(
      request([user("hi")], {
        prompt_cache_options: { mode: "explicit", ttl: "30m" },
        prompt_cache_retention: "24h",
      }),
    );
    expect(body.prompt_cache_options).toEqual({ mode: "explicit", ttl: "30m" });
    expect(body.prompt_cache_retention).toBe("24h");
  });
});

describe("toChatContent", () => {
  it("sends an image without detail with OpenAI's default detail auto, and keeps a given one", () => {
    expect(
      toChatContent([
        { type: "input_image", image_url: "https://example.test/a.png" },
        { type: "input_image", image_url: "https://example.test/b.png", detail: "low" },
      ]),
    ).toEqual([
      { type: "image_url", image_url: { url: "https://example.test/a.png", detail: "auto" } },
      { type: "image_url", image_url: { url: "https://example.test/b.png", detail: "low" } },
    ]);
  });
});
