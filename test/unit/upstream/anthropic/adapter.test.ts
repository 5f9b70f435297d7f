/**
 * The Anthropic adapter over a stubbed `fetch` (src/upstream/anthropic/adapter.ts, stream.ts,
 * synthesizer.ts): the key goes in `x-api-key` with `anthropic-version`, never as a bearer token;
 * a recorded-shape SSE stream (redacted and signed thinking, text, a tool call, `ping`, an unknown
 * event type) becomes Responses events — one reasoning item for the run of thinking blocks with
 * the blocks byte-exact in `encrypted_content`, usage with cached tokens — and an overload
 * answer or an in-stream `error` event becomes OpenAI's error shape.
 */
import { describe, expect, it } from "vitest";
import type { StoredItem } from "../../../../src/protocol/items.ts";
import { AnthropicMessagesUpstream } from "../../../../src/upstream/anthropic/adapter.ts";
import { openThinking } from "../../../../src/upstream/anthropic/thinking-blocks.ts";
import { UpstreamError, type UpstreamEvent } from "../../../../src/upstream/upstream.ts";

const BASE = "https://api.anthropic.test/v1";

function sse(events: Array<Record<string, unknown>>): string {
  return events.map((event) => `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`).join("");
}

const STREAM = sse([
  {
    type: "message_start",
    message: {
      id: "msg_1",
      model: "claude-x",
      usage: {
        input_tokens: 10,
        cache_read_input_tokens: 900,
        cache_creation_input_tokens: 90,
        output_tokens: 1,
      },
    },
  },
  { type: "ping" },
  { type: "content_block_start", index: 0, content_block: { type: "redacted_thinking", data: "opaque==" } },
  { type: "content_block_stop", index: 0 },
  { type: "content_block_start", index: 1, content_block: { type: "thinking", thinking: "", signature: "" } },
  { type: "content_block_delta", index: 1, delta: { type: "thinking_delta", thinking: "Let me " } },
  { type: "content_block_delta", index: 1, delta: { type: "thinking_delta", thinking: "see: ü🙂" } },
  { type: "content_block_delta", index: 1, delta: { type: "signature_delta", signature: "EqQBCg==" } },
  { type: "content_block_stop", index: 1 },
  { type: "some_future_event", detail: 1 },
  { type: "content_block_start", index: 2, content_block: { type: "text", text: "" } },
  { type: "content_block_delta", index: 2, delta: { type: "text_delta", text: "Running it." } },
  { type: "content_block_stop", index: 2 },
  {
    type: "content_block_start",
    index: 3,
    content_block: { type: "tool_use", id: "toolu_1", name: "exec", input: {} },
  },
  { type: "content_block_delta", index: 3, delta: { type: "input_json_delta", partial_json: '{"cmd":' } },
  { type: "content_block_delta", index: 3, delta: { type: "input_json_delta", partial_json: '"ls"}' } },
  { type: "content_block_stop", index: 3 },
  { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 42 } },
  { type: "message_stop" },
]);

function upstream(answer: () => Response, seen: Headers[] = []) {
  return new AnthropicMessagesUpstream({
    baseUrl: BASE,
    apiKey: "sk-ant-test",
    fetch: async (_url, init) => {
      seen.push(new Headers(init?.headers));
      return answer();
    },
  });
}

const request = {
  model: "claude-x",
  input: [{ id: "m", type: "message", role: "user", content: "hi" } as StoredItem],
  newInput: [],
  previousResponseId: null,
  responseId: "resp_1",
  settings: {},
  sessionKey: "s",
};

async function collect(stream: { first: UpstreamEvent; rest: AsyncIterable<UpstreamEvent> }) {
  const events = [stream.first];
  for await (const event of stream.rest) events.push(event);
  return events;
}

describe("AnthropicMessagesUpstream", () => {
  it("sends the key as x-api-key and turns the stream into Responses events", async () => {
    const seen: Headers[] = [];
    const stream = await upstream(
      () => new Response(STREAM, { headers: { "content-type": "text/event-stream" } }),
      seen,
    ).open(request, new AbortController().signal);
    expect(seen[0]?.get("x-api-key")).toBe("sk-ant-test");
    expect(seen[0]?.get("anthropic-version")).toBe("2023-06-01");
    expect(seen[0]?.get("authorization")).toBeNull();
    const events = await collect(stream);
    const terminal = events.at(-1) as {
      type: string;
      response: { output: Array<Record<string, unknown>>; usage: unknown };
    };
    expect(terminal.type).toBe("response.completed");
    const [reasoning, message, call] = terminal.response.output;
    expect(reasoning).toMatchObject({
      type: "reasoning",
      summary: [{ type: "summary_text", text: "Let me see: ü🙂" }],
    });
    expect(openThinking(reasoning?.encrypted_content)).toEqual([
      { type: "redacted_thinking", data: "opaque==" },
      { type: "thinking", thinking: "Let me see: ü🙂", signature: "EqQBCg==" },
    ]);
    expect(message).toMatchObject({
      type: "message",
      content: [{ type: "output_text", text: "Running it." }],
    });
    expect(call).toMatchObject({
      type: "function_call",
      call_id: "toolu_1",
      name: "exec",
      arguments: '{"cmd":"ls"}',
    });
    expect(terminal.response.usage).toEqual({
      input_tokens: 1000,
      input_tokens_details: { cached_tokens: 900, cache_write_tokens: 90 },
      output_tokens: 42,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 1042,
    });
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
  });

  it("maps an overload to a retryable 503 and a rate limit to 429 with its retry-after", async () => {
    const envelope = (type: string) => JSON.stringify({ type: "error", error: { type, message: "busy" } });
    const signal = new AbortController().signal;
    const overloaded = await upstream(() => new Response(envelope("overloaded_error"), { status: 529 }))
      .open(request, signal)
      .catch((e: unknown) => e);
    expect(overloaded).toMatchObject({ status: 503, code: "upstream_overloaded", type: "server_error" });
    const limited = await upstream(
      () => new Response(envelope("rate_limit_error"), { status: 429, headers: { "retry-after": "2" } }),
    )
      .open(request, signal)
      .catch((e: unknown) => e);
    expect(limited).toMatchObject({ status: 429, code: "rate_limit_exceeded", retryAfterMs: 2000 });
    const invalid = await upstream(() => new Response(envelope("invalid_request_error"), { status: 400 }))
      .open(request, signal)
      .catch((e: unknown) => e);
    expect(invalid).toMatchObject({ status: 400, code: "invalid_request_error", message: "busy" });
  });

  it("fails the stream on an error event after the first event", async () => {
    const body =
      STREAM.slice(0, STREAM.indexOf("event: content_block_start")) +
      sse([{ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }]);
    const stream = await upstream(() => new Response(body)).open(request, new AbortController().signal);
    const failure = await collect(stream).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(UpstreamError);
    expect(failure).toMatchObject({ status: 503, code: "upstream_overloaded" });
  });
});
