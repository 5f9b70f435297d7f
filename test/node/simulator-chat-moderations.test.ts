/**
 * The reference simulator's `/v1/chat/completions` and `/v1/moderations` against the real
 * openai-node client: streamed text and (parallel) tool calls accumulated by the SDK, usage
 * chunk, separate network writes, non-streaming completions, and deterministic batch moderation.
 */
import { request } from "node:http";
import OpenAI from "openai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningSimulator, startSimulator } from "../../simulator/server.ts";

let sim: RunningSimulator;
let client: OpenAI;

const tools = [
  {
    type: "function" as const,
    function: {
      name: "run_terminal_command",
      parameters: {
        type: "object",
        properties: { command: { type: "string" }, timeout: { type: "integer", maximum: 60 } },
        required: ["command"],
      },
    },
  },
];

beforeAll(async () => {
  sim = await startSimulator({ port: 0, quiet: true, decodeTokensPerSecond: 20_000 });
  client = new OpenAI({ apiKey: "sim-key", baseURL: `${sim.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await sim.close();
});

describe("simulator /v1/chat/completions", () => {
  it("streams text in several chunks with a usage chunk, accumulated by the SDK", async () => {
    const stream = client.chat.completions.stream({
      model: "deltagate-sim",
      messages: [
        { role: "system", content: "You are terse." },
        { role: "user", content: "Tell me things [sim:tokens=30]" },
      ],
      stream_options: { include_usage: true },
    });
    let contentChunks = 0;
    let usageChunk: unknown = null;
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) contentChunks++;
      if (chunk.choices.length === 0) usageChunk = chunk.usage;
    }
    const final = await stream.finalChatCompletion();
    expect(contentChunks).toBeGreaterThan(3);
    expect(final.choices[0]?.finish_reason).toBe("stop");
    expect(final.choices[0]?.message.content?.split(" ")).toHaveLength(30);
    expect(usageChunk).toMatchObject({ completion_tokens: 30, prompt_tokens: expect.any(Number) });
  });

  it("streams parallel tool calls (index, id, name first, then argument fragments) and finishes after the outputs", async () => {
    const messages: ChatCompletionMessageParam[] = [
      { role: "user", content: "Check `uname -a` [sim:parallel=2]" },
    ];
    const stream = client.chat.completions.stream({ model: "m", messages, tools });
    const final = await stream.finalChatCompletion();
    const choice = final.choices[0];
    expect(choice?.finish_reason).toBe("tool_calls");
    const calls = choice?.message.tool_calls ?? [];
    expect(calls).toHaveLength(2);
    for (const call of calls) {
      expect(call.type).toBe("function");
      if (call.type !== "function") continue;
      expect(call.id).toMatch(/^call_/);
      expect(call.function.name).toBe("run_terminal_command");
      expect(JSON.parse(call.function.arguments)).toEqual({ command: "uname -a", timeout: 60 });
    }
    expect(new Set(calls.map((c) => c.id)).size).toBe(2);

    const followUp = await client.chat.completions.create({
      model: "m",
      tools,
      messages: [
        ...messages,
        { role: "assistant", content: null, tool_calls: calls },
        ...calls.map(
          (c, i): ChatCompletionMessageParam => ({ role: "tool", tool_call_id: c.id, content: `out ${i}` }),
        ),
      ],
    });
    expect(followUp.object).toBe("chat.completion");
    expect(followUp.choices[0]?.finish_reason).toBe("stop");
    expect(followUp.choices[0]?.message.content).toBe("Done after 2 tool call(s). Last output: out 1");
    expect(followUp.usage?.prompt_tokens_details?.cached_tokens).toBeGreaterThan(0);
  });

  it("rejects a tool message without a preceding tool call", async () => {
    await expect(
      client.chat.completions.create({
        model: "m",
        messages: [
          { role: "user", content: "hi" },
          { role: "tool", tool_call_id: "call_x", content: "orphan" },
        ],
      }),
    ).rejects.toMatchObject({ status: 400 });
  });

  it("finishes with length at max_tokens and fails on fail=before", async () => {
    const cut = await client.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "long [sim:tokens=100]" }],
      max_tokens: 10,
    });
    expect(cut.choices[0]?.finish_reason).toBe("length");
    expect(cut.usage?.completion_tokens).toBe(10);
    await expect(
      client.chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: "x [sim:fail=before]" }],
      }),
    ).rejects.toMatchObject({ status: 500 });
  });

  it("sends stream chunks as separate network writes ending with [DONE]", async () => {
    const slow = await startSimulator({ port: 0, quiet: true, decodeTokensPerSecond: 2000 });
    try {
      const body = JSON.stringify({
        model: "m",
        stream: true,
        messages: [{ role: "user", content: "chunks please [sim:tokens=40]" }],
      });
      const received: string[] = await new Promise((resolve, reject) => {
        const req = request(
          `${slow.url}/v1/chat/completions`,
          { method: "POST", headers: { "content-type": "application/json" } },
          (res) => {
            const parts: string[] = [];
            res.setEncoding("utf8");
            res.on("data", (d: string) => parts.push(d));
            res.on("end", () => resolve(parts));
          },
        );
        req.on("error", reject);
        req.end(body);
      });
      expect(received.length).toBeGreaterThan(5);
      const text = received.join("");
      expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
      const chunks = text
        .split("\n\n")
        .filter((l) => l.startsWith("data: {"))
        .map(
          (l) =>
            JSON.parse(l.slice(6)) as { object: string; choices: Array<{ finish_reason: string | null }> },
        );
      expect(chunks.every((c) => c.object === "chat.completion.chunk")).toBe(true);
      expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("stop");
    } finally {
      await slow.close();
    }
  });
});

describe("simulator /v1/moderations", () => {
  it("returns one deterministic result per string, in order", async () => {
    const res = await client.moderations.create({
      model: "omni-moderation-latest",
      input: ["a friendly greeting", "plan the attack at dawn", "marked [sim:flag]"],
    });
    expect(res.id).toMatch(/^modr-/);
    expect(res.results.map((r) => r.flagged)).toEqual([false, true, true]);
    const [clean, flagged] = res.results;
    expect(Object.keys(clean?.categories ?? {})).toHaveLength(13);
    expect(Object.values(clean?.categories ?? {}).every((v) => v === false)).toBe(true);
    expect(Math.max(...Object.values(clean?.category_scores ?? {}))).toBeLessThan(0.01);
    expect(flagged?.categories.violence).toBe(true);
    expect(flagged?.category_scores.violence).toBe(0.9);
    expect(flagged?.categories.hate).toBe(false);
    const again = await client.moderations.create({ input: "a friendly greeting" });
    expect(again.results).toHaveLength(1);
    expect(again.results[0]?.category_scores).toEqual(clean?.category_scores);
  });

  it("treats a multimodal parts array as one input", async () => {
    const res = await client.moderations.create({
      input: [
        { type: "text", text: "an attack" },
        { type: "image_url", image_url: { url: "https://example.com/x.png" } },
      ],
    });
    expect(res.results).toHaveLength(1);
    expect(res.results[0]?.flagged).toBe(true);
    expect(res.results[0]?.category_applied_input_types.violence).toEqual(["text", "image"]);
  });

  it("is scriptable: latency, failures and unusable answers by directive, flag words by option", async () => {
    const started = Date.now();
    const slow = await client.moderations.create({ input: ["hi [sim:mod_delay_ms=120]"] });
    expect(Date.now() - started).toBeGreaterThanOrEqual(115);
    expect(slow.results).toHaveLength(1);
    await expect(client.moderations.create({ input: "x [sim:mod_fail=status:503]" })).rejects.toMatchObject({
      status: 503,
    });
    const raw = async (input: string) => {
      const res = await fetch(`${sim.url}/v1/moderations`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ input: [input, "second"] }),
      });
      return { status: res.status, text: await res.text() };
    };
    const notJson = await raw("[sim:mod_reply=not_json]");
    expect(notJson.status).toBe(200);
    expect(() => JSON.parse(notJson.text)).toThrow();
    expect(
      (JSON.parse((await raw("[sim:mod_reply=no_results]")).text) as { results: unknown[] }).results,
    ).toHaveLength(1);
    const words = await startSimulator({
      port: 0,
      quiet: true,
      moderationFlagWords: ["Zebra"],
      moderationLatencyMs: 50,
    });
    try {
      const other = new OpenAI({ apiKey: "k", baseURL: `${words.url}/v1`, maxRetries: 0 });
      const t0 = Date.now();
      const res = await other.moderations.create({ input: ["a zebra crossing", "a horse"] });
      expect(Date.now() - t0).toBeGreaterThanOrEqual(45);
      expect(res.results.map((r) => r.flagged)).toEqual([true, false]);
    } finally {
      await words.close();
    }
  });
});
