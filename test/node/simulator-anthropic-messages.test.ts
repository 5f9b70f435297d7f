/**
 * The simulator's Anthropic `POST /v1/messages` against the official `@anthropic-ai/sdk`
 * (`messages.stream`, `messages.create`): the SDK accumulates its SSE stream (text, tool use with
 * input JSON deltas, thinking with its signature), a tool loop with thinking round-trips the
 * signed blocks (a modified or missing signature is refused as Claude refuses it), tool names,
 * role alternation and tool pairing are checked, prompt caching reports read and written tokens per
 * breakpoint prefix, and errors come in Anthropic's shapes (401, 404, 429 with `retry-after`, 529).
 */
import Anthropic from "@anthropic-ai/sdk";
import type { MessageParam, Tool } from "@anthropic-ai/sdk/resources/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningSimulator, startSimulator } from "../../simulator/server.ts";

let sim: RunningSimulator;
let client: Anthropic;
const MODEL = "claude-sim-1";

const shell: Tool = {
  name: "exec_command",
  description: "Runs a shell command.",
  input_schema: { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] },
};

beforeAll(async () => {
  sim = await startSimulator({
    port: 0,
    quiet: true,
    decodeTokensPerSecond: 50_000,
    anthropicCacheMinTokens: 64,
  });
  client = new Anthropic({ apiKey: "sim-key", baseURL: sim.url, maxRetries: 0 });
});
afterAll(async () => {
  await sim.close();
});

describe("simulator POST /v1/messages with @anthropic-ai/sdk", () => {
  it("streams a text answer the SDK accumulates", async () => {
    const stream = client.messages.stream({
      model: MODEL,
      max_tokens: 256,
      messages: [{ role: "user", content: "Say something. [sim:tokens=12]" }],
    });
    const texts: string[] = [];
    stream.on("text", (text) => texts.push(text));
    const message = await stream.finalMessage();
    expect(message.stop_reason).toBe("end_turn");
    const [block] = message.content;
    expect(block?.type).toBe("text");
    expect(block?.type === "text" ? block.text : "").toBe(texts.join(""));
    expect(message.usage.output_tokens).toBeGreaterThan(0);
  });

  it("runs a tool loop with thinking; the signed blocks must come back unmodified", async () => {
    const messages: MessageParam[] = [{ role: "user", content: "Run `ls -la` twice. [sim:tools=2]" }];
    const thinking = { type: "enabled" as const, budget_tokens: 1024 };
    for (let turn = 0; turn < 2; turn++) {
      const message = await client.messages
        .stream({ model: MODEL, max_tokens: 4096, thinking, tools: [shell], messages })
        .finalMessage();
      expect(message.stop_reason).toBe("tool_use");
      const [first, second] = message.content;
      expect(first?.type).toBe("thinking");
      expect(first?.type === "thinking" ? first.signature : "").not.toBe("");
      expect(second?.type === "tool_use" ? second.input : null).toEqual({ cmd: "ls -la" });
      messages.push({ role: "assistant", content: message.content });
      const id = second?.type === "tool_use" ? second.id : "";
      messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "ok" }] });
    }
    const final = await client.messages.create({
      model: MODEL,
      max_tokens: 4096,
      thinking,
      tools: [shell],
      messages,
    });
    expect(final.stop_reason).toBe("end_turn");

    const tampered = structuredClone(messages);
    const assistant = tampered[3];
    const block = Array.isArray(assistant?.content) ? assistant.content[0] : undefined;
    if (block?.type === "thinking") block.thinking += " (edited)";
    await expect(
      client.messages.create({
        model: MODEL,
        max_tokens: 4096,
        thinking,
        tools: [shell],
        messages: tampered,
      }),
    ).rejects.toMatchObject({
      status: 400,
      error: { error: { message: expect.stringContaining("signature") } },
    });

    const stripped = structuredClone(messages);
    const last = stripped[3];
    if (last && Array.isArray(last.content)) last.content = last.content.filter((b) => b.type !== "thinking");
    await expect(
      client.messages.create({
        model: MODEL,
        max_tokens: 4096,
        thinking,
        tools: [shell],
        messages: stripped,
      }),
    ).rejects.toMatchObject({
      status: 400,
      error: { error: { message: expect.stringContaining("Expected `thinking`") } },
    });
  });

  it("refuses a tool whose name breaks Claude's pattern, as Claude does", async () => {
    const badly = { ...shell, name: "multi_agent.spawn" };
    await expect(
      client.messages.create({
        model: MODEL,
        max_tokens: 64,
        tools: [badly],
        messages: [{ role: "user", content: "hi" }],
      }),
    ).rejects.toMatchObject({
      status: 400,
      error: {
        error: {
          type: "invalid_request_error",
          message: "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
        },
      },
    });
  });

  it("refuses a tool_use without its tool_result and same-role neighbours", async () => {
    const messages: MessageParam[] = [
      { role: "user", content: "hi" },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "exec_command", input: {} }] },
      { role: "user", content: "no result" },
    ];
    await expect(
      client.messages.create({ model: MODEL, max_tokens: 64, tools: [shell], messages }),
    ).rejects.toMatchObject({
      status: 400,
      error: { type: "error", error: { type: "invalid_request_error" } },
    });
    await expect(
      client.messages.create({
        model: MODEL,
        max_tokens: 64,
        messages: [
          { role: "user", content: "a" },
          { role: "user", content: "b" },
        ],
      }),
    ).rejects.toMatchObject({ status: 400 });
  });

  it("reads the prefix a previous request wrote at its breakpoint", async () => {
    const system = [
      {
        type: "text" as const,
        text: "You are terse. ".repeat(40),
        cache_control: { type: "ephemeral" as const },
      },
    ];
    const user: MessageParam = {
      role: "user",
      content: [{ type: "text", text: "Question one. ".repeat(30), cache_control: { type: "ephemeral" } }],
    };
    const first = await client.messages.create({ model: MODEL, max_tokens: 64, system, messages: [user] });
    expect(first.usage.cache_read_input_tokens).toBe(0);
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThan(0);
    const second = await client.messages.create({
      model: MODEL,
      max_tokens: 64,
      system,
      messages: [
        { role: "user", content: [{ type: "text", text: "Question one. ".repeat(30) }] },
        { role: "assistant", content: first.content },
        {
          role: "user",
          content: [{ type: "text", text: "Question two.", cache_control: { type: "ephemeral" } }],
        },
      ],
    });
    const written =
      (first.usage.cache_creation_input_tokens ?? 0) + (first.usage.cache_read_input_tokens ?? 0);
    expect(second.usage.cache_read_input_tokens).toBe(written);
    expect(second.usage.input_tokens).toBe(0);
  });

  it("answers in Anthropic's error shapes", async () => {
    const noKey = await fetch(`${sim.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: MODEL, max_tokens: 8, messages: [{ role: "user", content: "x" }] }),
    });
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toMatchObject({ type: "error", error: { type: "authentication_error" } });
    await expect(
      client.messages.create({ model: "gpt-4o", max_tokens: 8, messages: [{ role: "user", content: "x" }] }),
    ).rejects.toMatchObject({ status: 404, error: { error: { type: "not_found_error" } } });
    const limited = await client.messages
      .create({
        model: MODEL,
        max_tokens: 8,
        messages: [{ role: "user", content: "x [sim:fail=status:429] [sim:retry_after=3]" }],
      })
      .catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect((limited as InstanceType<typeof Anthropic.RateLimitError>).headers.get("retry-after")).toBe("3");
    await expect(
      client.messages.create({
        model: MODEL,
        max_tokens: 8,
        messages: [{ role: "user", content: "x [sim:fail=status:529]" }],
      }),
    ).rejects.toMatchObject({ status: 529, error: { error: { type: "overloaded_error" } } });
  });
});
