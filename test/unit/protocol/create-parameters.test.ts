/**
 * Every create parameter is either known or refused as OpenAI refuses it
 * (src/protocol/create-request.ts): each of OpenAI's own parameters (the `openai` SDK's
 * `ResponseCreateParams` and WebSocket `ResponseCreate`, listed here from the type so an SDK
 * upgrade that adds one fails `npm run check` until it is placed) parses or is refused by name;
 * any other field is 400 `unknown_parameter`, `param` naming it, in HTTP bodies and frames alike.
 */
import { readFileSync } from "node:fs";
import type { ResponseCreateParamsBase, ResponsesClientEvent } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { parseClientFrame, zodToApiError } from "../../../src/protocol/client-events.ts";
import { createRequest } from "../../../src/protocol/create-request.ts";
import { ApiError } from "../../../src/protocol/errors.ts";

/** A sample value of each of OpenAI's create parameters; the key set must match the SDK's. */
const OPENAI_PARAMETERS: Record<keyof ResponseCreateParamsBase, unknown> = {
  access_programs: { cyber: "standard" },
  background: false,
  background_options: { completion_window: "2h" },
  context_management: [{ type: "compaction", compact_threshold: 1000 }],
  conversation: null,
  image: { context_compression: "auto" },
  include: ["reasoning.encrypted_content"],
  input: "hi",
  instructions: "Be brief.",
  max_output_tokens: 100,
  max_tool_calls: 2,
  metadata: { k: "v" },
  model: "m",
  moderation: null,
  parallel_tool_calls: true,
  previous_response_id: null,
  prompt: { id: "pmpt_1", version: "2", variables: { city: "Paris" } },
  prompt_cache_key: "k",
  prompt_cache_options: { mode: "implicit", ttl: "30m" },
  prompt_cache_retention: "24h",
  reasoning: { effort: "low" },
  safety_identifier: "s",
  service_tier: "auto",
  store: true,
  stream: true,
  stream_options: { include_obfuscation: false },
  temperature: 1,
  text: { format: { type: "text" } },
  tool_choice: "auto",
  tools: [{ type: "function", name: "f", parameters: {}, strict: true }],
  top_logprobs: 0,
  top_p: 1,
  truncation: "auto",
  user: "u",
};

/** The WebSocket frame's own fields beyond the HTTP body's. */
const WS_ONLY: Record<
  Exclude<keyof ResponsesClientEvent.ResponseCreate, keyof ResponseCreateParamsBase>,
  unknown
> = { type: "response.create", generate: false, stream_id: "lane-1" };

function refusal(parse: () => unknown) {
  try {
    parse();
  } catch (error) {
    if (error instanceof ApiError) return { status: error.status, ...error.toBody() };
    throw error;
  }
  throw new Error("accepted");
}

describe("create parameters", () => {
  it("parses every one of OpenAI's parameters, over HTTP and in a WebSocket frame", () => {
    expect(createRequest.safeParse(OPENAI_PARAMETERS).success).toBe(true);
    expect(() => parseClientFrame(JSON.stringify({ ...OPENAI_PARAMETERS, ...WS_ONLY }))).not.toThrow();
  });

  it("accepts Codex's client_metadata", () => {
    const frame = { type: "response.create", model: "m", input: "hi", client_metadata: { turn_id: "t" } };
    expect(() => parseClientFrame(JSON.stringify(frame))).not.toThrow();
  });

  it("accepts every frame Codex CLI sent in a recorded run (test/support/codex-notes.md)", () => {
    const frames = readFileSync(new URL("../../fixtures/codex/frames.jsonl", import.meta.url), "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "");
    expect(frames.length).toBeGreaterThan(0);
    for (const frame of frames) expect(() => parseClientFrame(frame)).not.toThrow();
  });

  it.each([
    ["a typo of a parameter", { tempreature: 0.2 }, "tempreature"],
    ["a Chat Completions parameter", { max_tokens: 10 }, "max_tokens"],
    ["a field of another API's event", { event_id: "e1" }, "event_id"],
  ])("refuses %s with OpenAI's unknown_parameter error, over HTTP and WebSocket", (_what, extra, param) => {
    const expected = {
      status: 400,
      type: "invalid_request_error",
      code: "unknown_parameter",
      message: `Unknown parameter: '${param}'.`,
      param,
    };
    const body = { model: "m", input: "hi", ...extra };
    expect(
      refusal(() => {
        const parsed = createRequest.safeParse(body);
        if (!parsed.success) throw zodToApiError(parsed.error);
      }),
    ).toEqual(expected);
    expect(refusal(() => parseClientFrame(JSON.stringify({ type: "response.create", ...body })))).toEqual(
      expected,
    );
  });

  it("names the path of an unknown nested field", () => {
    const frame = { type: "response.create", model: "m", input: "hi", moderation: { model: "x", polcy: {} } };
    expect(refusal(() => parseClientFrame(JSON.stringify(frame)))).toMatchObject({
      code: "unknown_parameter",
      message: "Unknown parameter: 'moderation.polcy'.",
      param: "moderation.polcy",
    });
  });

  it("refuses `type` in an HTTP body (it belongs to the WebSocket frame)", () => {
    const parsed = createRequest.safeParse({ type: "response.create", model: "m", input: "hi" });
    expect(parsed.success).toBe(false);
    if (!parsed.success) expect(zodToApiError(parsed.error).param).toBe("type");
  });
});
