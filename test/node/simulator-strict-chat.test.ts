/**
 * The reference simulator validates `POST /v1/chat/completions` like OpenAI (strict by default),
 * driven by the real openai-node client: each invalid request class is answered with OpenAI's
 * error (status, type, code, param, message) and the valid variants next to it pass.
 */
import OpenAI, { APIError } from "openai";
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
} from "openai/resources/chat/completions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningSimulator, startSimulator } from "../../simulator/server.ts";

let sim: RunningSimulator;
let client: OpenAI;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, quiet: true, decodeTokensPerSecond: 20_000 });
  client = new OpenAI({ apiKey: "sim-key", baseURL: `${sim.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await sim.close();
});

const tools = [
  {
    type: "function" as const,
    function: { name: "exec_command", parameters: { type: "object", properties: {} } },
  },
];

async function rejection(call: Promise<unknown>): Promise<{ status: number | undefined; error: unknown }> {
  try {
    await call;
  } catch (err) {
    if (err instanceof APIError) return { status: err.status, error: err.error };
    throw err;
  }
  throw new Error("the request was accepted");
}

function invalid(message: string, param: string | null, code: string | null = null) {
  return { status: 400, error: { message, type: "invalid_request_error", param, code } };
}

function create(messages: unknown[], extra: Partial<ChatCompletionCreateParamsNonStreaming> = {}) {
  return client.chat.completions.create({
    model: "m",
    messages: messages as ChatCompletionMessageParam[],
    ...extra,
  });
}

const callMessage = (...ids: string[]) => ({
  role: "assistant",
  content: null,
  tool_calls: ids.map((id) => ({
    id,
    type: "function",
    function: { name: "exec_command", arguments: "{}" },
  })),
});
const toolMessage = (id: string) => ({ role: "tool", tool_call_id: id, content: "ok" });
const image = (detail?: string) => ({
  type: "image_url",
  image_url: { url: "https://example.com/cat.png", ...(detail ? { detail } : {}) },
});

describe("strict simulator: chat messages", () => {
  it("rejects an empty messages array", async () => {
    expect(await rejection(create([]))).toEqual(
      invalid(
        "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
        "messages",
        "empty_array",
      ),
    );
  });

  it("rejects a tool message that answers no tool call of the preceding assistant message", async () => {
    expect(await rejection(create([{ role: "user", content: "hi" }, toolMessage("call_x")]))).toEqual(
      invalid(
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
        "messages.[1].role",
      ),
    );
    // Answering a call of an OLDER assistant message is the same mistake.
    const stale = create(
      [
        { role: "user", content: "hi" },
        callMessage("call_a"),
        toolMessage("call_a"),
        { role: "assistant", content: "done" },
        toolMessage("call_a"),
      ],
      { tools },
    );
    expect(await rejection(stale)).toMatchObject({ status: 400, error: { param: "messages.[4].role" } });
  });

  it("rejects a tool call left unanswered before the next message; accepts outputs in any order", async () => {
    const unanswered = create(
      [
        { role: "user", content: "hi" },
        callMessage("call_1", "call_2"),
        toolMessage("call_2"),
        { role: "user", content: "x" },
      ],
      { tools },
    );
    expect(await rejection(unanswered)).toEqual(
      invalid(
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_1",
        "messages",
      ),
    );
    const answered = await create(
      [
        { role: "user", content: "hi" },
        callMessage("call_1", "call_2"),
        toolMessage("call_2"),
        toolMessage("call_1"),
      ],
      { tools },
    );
    expect(answered.choices[0]?.finish_reason).toBe("stop");
  });

  it("accepts images in user messages only, with detail auto/low/high/original or none", async () => {
    for (const detail of [undefined, "auto", "low", "high", "original"]) {
      const ok = await create([{ role: "user", content: [{ type: "text", text: "look" }, image(detail)] }]);
      expect(ok.choices[0]?.finish_reason).toBe("stop");
    }
    const badDetail = create([{ role: "user", content: [image("medium")] }]);
    expect(await rejection(badDetail)).toEqual(
      invalid(
        "Invalid value: 'medium'. Supported values are: 'auto', 'low', 'high', and 'original'.",
        "messages[0].content[0].image_url.detail",
        "invalid_value",
      ),
    );
    const inSystem = create([
      { role: "system", content: [image()] },
      { role: "user", content: "hi" },
    ]);
    expect(await rejection(inSystem)).toEqual(
      invalid(
        "Invalid 'messages[0]'. Image URLs are only allowed for messages with role 'user', but this message with role 'system' contains an image URL.",
        "messages[0]",
        "invalid_value",
      ),
    );
  });

  it("rejects an assistant message with neither content nor tool calls, and an empty tool_calls array", async () => {
    const nullContent = create([
      { role: "user", content: "hi" },
      { role: "assistant", content: null },
      { role: "user", content: "again" },
    ]);
    expect(await rejection(nullContent)).toEqual(
      invalid("Invalid value for 'content': expected a string, got null.", "messages.[1].content"),
    );
    const emptyCalls = create([
      { role: "user", content: "hi" },
      { role: "assistant", content: "ok", tool_calls: [] },
      { role: "user", content: "again" },
    ]);
    expect(await rejection(emptyCalls)).toEqual(
      invalid(
        "Invalid 'messages[1].tool_calls': empty array. Expected an array with minimum length 1, but got an empty array instead.",
        "messages[1].tool_calls",
        "empty_array",
      ),
    );
  });

  it("rejects an empty tools array, and tool_choice or parallel_tool_calls without tools", async () => {
    const hi = [{ role: "user", content: "hi" }];
    expect(await rejection(create(hi, { tools: [] }))).toEqual(
      invalid(
        "Invalid 'tools': empty array. Expected an array with minimum length 1, but got an empty array instead.",
        "tools",
        "empty_array",
      ),
    );
    expect(await rejection(create(hi, { tool_choice: "auto" }))).toEqual(
      invalid(
        "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
        "tool_choice",
      ),
    );
    expect(await rejection(create(hi, { parallel_tool_calls: false }))).toEqual(
      invalid(
        "Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' is only allowed when 'tools' are specified.",
        "parallel_tool_calls",
      ),
    );
    const withTools = await create(hi, { tools, tool_choice: "none", parallel_tool_calls: false });
    expect(withTools.choices[0]?.finish_reason).toBe("stop");
  });
});
