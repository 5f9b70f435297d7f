/**
 * The Gemini adapter over a stubbed `fetch` (src/upstream/gemini/adapter.ts, stream.ts,
 * synthesizer.ts, errors.ts): the key goes in `x-goog-api-key`, never as a bearer token, to
 * `models/{model}:streamGenerateContent?alt=sse`; a recorded-shape stream (thought summaries, a
 * signed first call and an unsigned parallel one, usage with cached and thought tokens) becomes
 * Responses events — a reasoning item right before the call it signs, its signature byte-exact in
 * `encrypted_content` — and Google's errors (429 with `RetryInfo`, 503, a bad key's 400, an
 * error chunk mid-stream) become OpenAI's error shapes.
 */
import { describe, expect, it } from "vitest";
import type { StoredItem } from "../../../../src/protocol/items.ts";
import { GeminiUpstream } from "../../../../src/upstream/gemini/adapter.ts";
import { openThoughts } from "../../../../src/upstream/gemini/thought-signatures.ts";
import { createAdapter } from "../../../../src/upstream/router.ts";
import { parseRoutes } from "../../../../src/upstream/routes.ts";
import { UpstreamError, type UpstreamEvent } from "../../../../src/upstream/upstream.ts";

const BASE = "https://generativelanguage.test/v1beta";

function sse(chunks: Array<Record<string, unknown>>): string {
  return chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\r\n\r\n`).join("");
}

const candidate = (parts: unknown[], finishReason?: string) => ({
  candidates: [{ content: { role: "model", parts }, index: 0, ...(finishReason ? { finishReason } : {}) }],
});

const STREAM = sse([
  candidate([{ text: "Let me ", thought: true }]),
  candidate([{ text: "see: ü🙂", thought: true }]),
  candidate([{ text: "Running it." }]),
  {
    ...candidate(
      [
        { functionCall: { id: "c1", name: "exec", args: { cmd: "ls" } }, thoughtSignature: "EqQBCg==" },
        { functionCall: { id: "c2", name: "exec", args: { cmd: "pwd" } } },
      ],
      "STOP",
    ),
    usageMetadata: {
      promptTokenCount: 1000,
      cachedContentTokenCount: 900,
      candidatesTokenCount: 30,
      thoughtsTokenCount: 12,
      totalTokenCount: 1042,
    },
  },
]);

function upstream(answer: () => Response, seen: Array<{ url: string; headers: Headers }> = []) {
  return new GeminiUpstream({
    baseUrl: BASE,
    apiKey: "g-key",
    fetch: (async (input: RequestInfo | URL, init?: RequestInit) => {
      seen.push({ url: String(input), headers: new Headers(init?.headers) });
      return answer();
    }) as typeof fetch,
  });
}

const request = (settings: Record<string, unknown> = {}) => ({
  model: "gemini-3-flash",
  input: [{ id: "msg_1", type: "message", role: "user", content: "hi" }] as unknown as StoredItem[],
  newInput: [],
  previousResponseId: null,
  responseId: "resp_x",
  settings,
  sessionKey: "s",
});

async function events(up: GeminiUpstream, settings: Record<string, unknown> = {}): Promise<UpstreamEvent[]> {
  const stream = await up.open(request(settings), new AbortController().signal);
  const out = [stream.first];
  for await (const event of stream.rest) out.push(event);
  return out;
}

const ok = (body: string) => () => new Response(body, { headers: { "content-type": "text/event-stream" } });

describe("Gemini adapter", () => {
  it('is built for an `api: "gemini"` route, which Deltagate compacts and counts for', () => {
    const fallback = { baseUrl: BASE, apiKey: null, api: "responses-http" as const };
    const route = { model: "gemini-*", api: "gemini", base_url: BASE, api_key_var: "GEMINI_KEY" };
    const [parsed] = parseRoutes(JSON.stringify([route]), fallback, () => "g-key");
    expect(parsed).toMatchObject({
      api: "gemini",
      apiKey: "g-key",
      compaction: "deltagate",
      inputTokens: "deltagate",
    });
    expect(createAdapter(parsed!)).toBeInstanceOf(GeminiUpstream);
    expect(() =>
      parseRoutes(JSON.stringify([{ ...route, compaction: "upstream" }]), fallback, () => "g-key"),
    ).toThrow(/cannot be "upstream" for a Gemini route/);
  });

  it("posts to streamGenerateContent with the key in x-goog-api-key", async () => {
    const seen: Array<{ url: string; headers: Headers }> = [];
    await events(upstream(ok(STREAM), seen));
    expect(seen[0]?.url).toBe(`${BASE}/models/gemini-3-flash:streamGenerateContent?alt=sse`);
    expect(seen[0]?.headers.get("x-goog-api-key")).toBe("g-key");
    expect(seen[0]?.headers.get("authorization")).toBeNull();
  });

  it("puts the call's signature in a reasoning item right before it, summaries and usage included", async () => {
    const out = await events(upstream(ok(STREAM)));
    expect(out[0]?.type).toBe("response.created");
    const final = out.at(-1) as {
      type: string;
      response: { output: Array<Record<string, unknown>>; usage: unknown };
    };
    expect(final.type).toBe("response.completed");
    const [reasoning, message, signed, call, next] = final.response.output;
    expect(reasoning).toMatchObject({
      type: "reasoning",
      summary: [{ type: "summary_text", text: "Let me see: ü🙂" }],
    });
    expect(openThoughts(reasoning?.encrypted_content)).toEqual({ parts: [], next: null });
    expect(message).toMatchObject({
      type: "message",
      content: [{ type: "output_text", text: "Running it." }],
    });
    expect(openThoughts(signed?.encrypted_content)).toEqual({ parts: [], next: "EqQBCg==" });
    expect(call).toMatchObject({ type: "function_call", call_id: "c1", arguments: '{"cmd":"ls"}' });
    expect(next).toMatchObject({ type: "function_call", call_id: "c2" });
    expect(final.response.usage).toEqual({
      input_tokens: 1000,
      input_tokens_details: { cached_tokens: 900, cache_write_tokens: 0 },
      output_tokens: 42,
      output_tokens_details: { reasoning_tokens: 12 },
      total_tokens: 1042,
    });
    // Every item is closed before the next opens.
    const order = out
      .filter((e) => e.type.startsWith("response.output_item"))
      .map((e) => `${e.type}:${e.output_index}`);
    expect(order).toEqual(
      [0, 1, 2, 3, 4].flatMap((i) => [`response.output_item.added:${i}`, `response.output_item.done:${i}`]),
    );
  });

  it("keeps the first call only with parallel_tool_calls false, and mints call ids Gemini did not send", async () => {
    const body = sse([
      candidate(
        [
          { functionCall: { name: "exec", args: {} }, thoughtSignature: "c2ln" },
          { functionCall: { name: "exec", args: { cmd: "x" } } },
        ],
        "STOP",
      ),
    ]);
    const out = await events(upstream(ok(body)), { parallel_tool_calls: false });
    const final = out.at(-1) as unknown as { response: { output: Array<Record<string, unknown>> } };
    expect(final.response.output.map((item) => item.type)).toEqual(["reasoning", "function_call"]);
    expect(final.response.output[1]?.call_id).toMatch(/^fc_/);
  });

  it("maps finish reasons to incomplete or failed", async () => {
    const answer = (reason: string) => ok(sse([candidate([{ text: "x" }], reason)]));
    const last = async (reason: string) => (await events(upstream(answer(reason)))).at(-1);
    expect(await last("MAX_TOKENS")).toMatchObject({
      type: "response.incomplete",
      response: { incomplete_details: { reason: "max_output_tokens" } },
    });
    expect(await last("SAFETY")).toMatchObject({
      response: { incomplete_details: { reason: "content_filter" } },
    });
    await expect(last("MALFORMED_FUNCTION_CALL")).rejects.toMatchObject({
      status: 502,
      code: "upstream_error",
    });
    await expect(events(upstream(ok(sse([candidate([{ text: "x" }])]))))).rejects.toMatchObject({
      status: 502,
    });
  });

  it("maps Google's errors to OpenAI's shapes", async () => {
    const error = (status: number, body: unknown) => () =>
      new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
    const limited = await events(
      upstream(
        error(429, {
          error: {
            code: 429,
            message: "Resource has been exhausted",
            status: "RESOURCE_EXHAUSTED",
            details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "2.5s" }],
          },
        }),
      ),
    ).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(UpstreamError);
    expect(limited).toMatchObject({ status: 429, code: "rate_limit_exceeded", retryAfterMs: 2500 });
    const overloaded = await events(
      upstream(
        error(503, { error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" } }),
      ),
    ).catch((e: unknown) => e);
    expect(overloaded).toMatchObject({ status: 503, code: "upstream_overloaded", type: "server_error" });
    const badKey = await events(
      upstream(
        error(400, {
          error: {
            code: 400,
            message: "API key not valid. Please pass a valid API key.",
            status: "INVALID_ARGUMENT",
            details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID" }],
          },
        }),
      ),
    ).catch((e: unknown) => e);
    expect(badKey).toMatchObject({ status: 502, code: "upstream_auth_failed" });
    expect((badKey as Error).message).not.toContain("API key not valid");
    const invalid = await events(
      upstream(error(400, { error: { code: 400, message: "Bad thing.", status: "INVALID_ARGUMENT" } })),
    ).catch((e: unknown) => e);
    expect(invalid).toMatchObject({ status: 400, code: "invalid_argument", message: "Bad thing." });
    const cut = sse([
      candidate([{ text: "Hello" }]),
      { error: { code: 503, message: "Overloaded", status: "UNAVAILABLE" } },
    ]);
    await expect(events(upstream(ok(cut)))).rejects.toMatchObject({
      status: 503,
      code: "upstream_overloaded",
    });
  });
});
