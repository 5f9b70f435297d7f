/**
 * The Chat Completions response pipeline (SSE bytes → chunks → Responses events) fed by real
 * `ReadableStream`s: multi-byte characters split inside a code point across network chunks,
 * text then tool calls, interleaved parallel tool calls, finish reasons, usage mapping, and the
 * failures (cut-off stream, in-stream error, garbage). Every complete event sequence must pass
 * the openai SDK's accumulator.
 */
import { describe, expect, it } from "vitest";
import { chatStreamEvents } from "../../../../src/upstream/chat/stream.ts";
import { ChatEventSynthesizer } from "../../../../src/upstream/chat/synthesizer.ts";
import { UpstreamError, type UpstreamEvent } from "../../../../src/upstream/upstream.ts";
import { type Frame, validateWithSdk } from "../../../support/sdk-events.ts";

type Delta = Record<string, unknown>;

function chunk(delta: Delta, finish: string | null = null): Record<string, unknown> {
  return {
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1,
    model: "m",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  };
}

const USAGE = {
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 1,
  model: "m",
  choices: [],
  usage: {
    prompt_tokens: 120,
    completion_tokens: 30,
    total_tokens: 150,
    prompt_tokens_details: { cached_tokens: 100 },
    completion_tokens_details: { reasoning_tokens: 7 },
  },
};

function sseBytes(chunks: unknown[], done = true): Uint8Array {
  const text =
    chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + (done ? "data: [DONE]\n\n" : "");
  return new TextEncoder().encode(text);
}

/** A body delivering `bytes` in the given pieces (cut positions are byte offsets). */
function bodyOf(bytes: Uint8Array, cuts: number[]): ReadableStream<Uint8Array> {
  const bounds = [0, ...cuts.filter((c) => c > 0 && c < bytes.length), bytes.length];
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const start = bounds[i];
      const end = bounds[i + 1];
      if (start === undefined || end === undefined) return controller.close();
      i++;
      controller.enqueue(bytes.slice(start, end));
    },
  });
}

/** Cut positions right after the lead byte of every multi-byte character (inside each code point). */
function insideEveryCodePoint(bytes: Uint8Array): number[] {
  const cuts: number[] = [];
  bytes.forEach((b, i) => {
    if (b >= 0xc0) cuts.push(i + 1);
  });
  return cuts;
}

function synthesizer(): ChatEventSynthesizer {
  return new ChatEventSynthesizer({ id: "resp_test", model: "m", createdAt: 1, settings: {} });
}

async function collect(body: ReadableStream<Uint8Array>): Promise<UpstreamEvent[]> {
  const events: UpstreamEvent[] = [];
  for await (const event of chatStreamEvents(body, synthesizer(), new AbortController().signal)) {
    events.push(event);
  }
  return events;
}

async function failureOf(body: ReadableStream<Uint8Array>): Promise<unknown> {
  try {
    await collect(body);
  } catch (cause) {
    return cause;
  }
  return null;
}

function ofType(events: UpstreamEvent[], type: string): UpstreamEvent[] {
  return events.filter((e) => e.type === type);
}

function terminal(events: UpstreamEvent[]) {
  return events.at(-1) as unknown as {
    type: string;
    response: {
      status: string;
      output: Array<Record<string, unknown>>;
      usage: unknown;
      incomplete_details: unknown;
    };
  };
}

const TEXT = "日本語のテキスト🙂👍🏽 ok";

describe("chat stream → Responses events", () => {
  const textChunks = [
    chunk({ role: "assistant", content: "" }),
    chunk({ content: "日本語の" }),
    chunk({ content: "テキスト🙂" }),
    chunk({ content: "👍🏽 ok" }),
    chunk({}, "stop"),
    USAGE,
  ];

  it("decodes characters split inside a code point across chunks (cut after every lead byte)", async () => {
    const bytes = sseBytes(textChunks);
    const cuts = insideEveryCodePoint(bytes);
    expect(cuts.length).toBeGreaterThan(10);
    const events = await collect(bodyOf(bytes, cuts));
    const deltas = ofType(events, "response.output_text.delta").map((e) => e.delta);
    expect(deltas.join("")).toBe(TEXT);
    expect(ofType(events, "response.output_text.done")[0]?.text).toBe(TEXT);
    const final = await validateWithSdk(events as Frame[]);
    expect(final.output_text).toBe(TEXT);
    expect(JSON.stringify(events)).not.toContain("\uFFFD");
  });

  it("decodes the same stream delivered one byte at a time", async () => {
    const bytes = sseBytes(textChunks);
    const events = await collect(
      bodyOf(
        bytes,
        Array.from({ length: bytes.length }, (_, i) => i),
      ),
    );
    expect(
      ofType(events, "response.output_text.delta")
        .map((e) => e.delta)
        .join(""),
    ).toBe(TEXT);
  });

  it("emits the §3.4 sequence for a text answer, with usage mapped", async () => {
    const events = await collect(bodyOf(sseBytes(textChunks), []));
    expect(events.map((e) => e.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(terminal(events).response.usage).toEqual({
      input_tokens: 120,
      input_tokens_details: { cached_tokens: 100, cache_write_tokens: 0 },
      output_tokens: 30,
      output_tokens_details: { reasoning_tokens: 7 },
      total_tokens: 150,
    });
    expect(terminal(events).response.output).toEqual([
      {
        id: expect.stringMatching(/^msg_/),
        type: "message",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: TEXT, annotations: [], logprobs: [] }],
      },
    ]);
  });

  it("closes the message before a tool call and keeps parallel calls in index order, even interleaved", async () => {
    const events = await collect(
      bodyOf(
        sseBytes([
          chunk({ role: "assistant", content: "Let me check." }),
          chunk({
            tool_calls: [
              { index: 0, id: "call_A", type: "function", function: { name: "exec", arguments: "" } },
            ],
          }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '{"cmd":' } }] }),
          // a call without upstream id gets a generated call_id
          chunk({
            tool_calls: [{ index: 1, type: "function", function: { name: "read", arguments: '{"p' } }],
          }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '"ls 日本"}' } }] }),
          chunk({ tool_calls: [{ index: 1, function: { arguments: 'ath":"a"}' } }] }),
          chunk({}, "tool_calls"),
          USAGE,
        ]),
        [],
      ),
    );
    const final = await validateWithSdk(events as Frame[]);
    expect(final.status).toBe("completed");
    const output = terminal(events).response.output;
    expect(output.map((item) => item.type)).toEqual(["message", "function_call", "function_call"]);
    expect(output[1]).toMatchObject({ call_id: "call_A", name: "exec", arguments: '{"cmd":"ls 日本"}' });
    expect(output[2]).toMatchObject({ name: "read", arguments: '{"path":"a"}', status: "completed" });
    expect(String(output[2]?.call_id)).toMatch(/^call_.{8,}/);
    // The message's done events come before the first call is added.
    const types = events.map((e) => e.type);
    expect(types.indexOf("response.output_item.done")).toBeLessThan(
      types.indexOf("response.output_item.added", types.indexOf("response.output_item.added") + 1),
    );
    // Both calls close in output order.
    const doneIndexes = ofType(events, "response.output_item.done").map((e) => e.output_index);
    expect(doneIndexes).toEqual([0, 1, 2]);
  });

  it("separates complete calls a server sends all as index 0, and ignores a repeated name", async () => {
    const whole = (id: string, args: string) =>
      chunk({
        tool_calls: [{ index: 0, id, type: "function", function: { name: "exec", arguments: args } }],
      });
    const events = await collect(
      bodyOf(
        sseBytes([
          whole("call_1", '{"cmd":"a"}'),
          whole("call_2", '{"cmd":'),
          chunk({ tool_calls: [{ index: 0, id: "call_2", function: { name: "exec", arguments: '"b"}' } }] }),
          chunk({}, "tool_calls"),
        ]),
        [],
      ),
    );
    await validateWithSdk(events as Frame[]);
    expect(terminal(events).response.output).toMatchObject([
      { type: "function_call", call_id: "call_1", name: "exec", arguments: '{"cmd":"a"}' },
      { type: "function_call", call_id: "call_2", name: "exec", arguments: '{"cmd":"b"}' },
    ]);
  });

  it("maps finish_reason length and content_filter to response.incomplete", async () => {
    for (const [finish, reason] of [
      ["length", "max_output_tokens"],
      ["content_filter", "content_filter"],
    ] as const) {
      const events = await collect(
        bodyOf(sseBytes([chunk({ role: "assistant", content: "partial" }), chunk({}, finish)]), []),
      );
      const end = terminal(events);
      expect(end.type).toBe("response.incomplete");
      expect(end.response.incomplete_details).toEqual({ reason });
      expect(end.response.usage).toBeNull();
      const final = await validateWithSdk(events as Frame[]);
      expect(final.output_text).toBe("partial");
    }
  });

  it("synthesizes a refusal content part", async () => {
    const events = await collect(
      bodyOf(
        sseBytes([
          chunk({ role: "assistant", content: null, refusal: "I can't" }),
          chunk({ refusal: " help." }),
          chunk({}, "stop"),
        ]),
        [],
      ),
    );
    await validateWithSdk(events as Frame[]);
    expect(terminal(events).response.output[0]).toMatchObject({
      content: [{ type: "refusal", refusal: "I can't help." }],
    });
  });

  it("fails with an UpstreamError when the stream is cut before a finish reason", async () => {
    const error = await failureOf(
      bodyOf(sseBytes([chunk({ role: "assistant", content: "abc" })], false), []),
    );
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ status: 502, code: "upstream_error" });
  });

  it("fails with the upstream's error for an in-stream error object, and on a non-JSON chunk", async () => {
    const inStream = await failureOf(
      bodyOf(
        sseBytes([
          chunk({ role: "assistant", content: "a" }),
          { error: { message: "model crashed (key sk-abcdefghijkl)", code: "engine_overloaded" } },
        ]),
        [],
      ),
    );
    expect(inStream).toMatchObject({ status: 500, code: "engine_overloaded" });
    // Relayed as the upstream said it; the redaction stage (src/pipeline/redaction-stage.ts,
    // test/workers/hostile/echoing-upstream.test.ts) removes the key before anyone sees it.
    expect(String((inStream as Error).message)).toContain("model crashed");
    const garbage = await failureOf(bodyOf(new TextEncoder().encode("data: {not json\n\n"), []));
    expect(garbage).toBeInstanceOf(UpstreamError);
  });

  it("fails when the body breaks mid-stream (network loss)", async () => {
    const bytes = sseBytes([chunk({ role: "assistant", content: "abc" })], false);
    let sent = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent) return controller.error(new Error("connection reset"));
        sent = true;
        controller.enqueue(bytes);
      },
    });
    const error = await failureOf(body);
    expect(error).toMatchObject({ status: 502, message: "The upstream connection was lost mid-stream." });
  });
});
