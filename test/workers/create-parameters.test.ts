/**
 * Every create parameter is served or refused (issue #25, Build 4), through the real Worker and
 * session Durable Object with the simulator upstream: an unknown parameter is OpenAI's 400
 * `unknown_parameter` over HTTP and a WebSocket `error` event (the socket stays open and serves
 * the next turn); `prompt` reaches a Responses route's upstream (WebSocket mode and HTTP) and is
 * echoed; on a Chat Completions or Anthropic Messages route `prompt` and a hosted tool are 400s
 * naming them, and nothing reaches the upstream.
 */
import { describe, expect, inject, it } from "vitest";
import { SHELL_TOOL } from "../support/fixtures.ts";
import { testId } from "../support/test-id.ts";
import { connect, KEY_A, simulatorRequests, uniqueSession, workerFetch } from "../support/ws-client.ts";

const PROMPT = { id: "pmpt_weather", version: "3", variables: { city: "Paris" } };

async function create(body: Record<string, unknown>): Promise<Response> {
  return workerFetch("/v1/responses", {
    method: "POST",
    headers: {
      authorization: `Bearer ${KEY_A}`,
      "content-type": "application/json",
      "session-id": uniqueSession("params"),
    },
    body: JSON.stringify(body),
  });
}

async function refusal(response: Response): Promise<{ status: number; error: Record<string, unknown> }> {
  return { status: response.status, ...((await response.json()) as { error: Record<string, unknown> }) };
}

describe("create parameters", () => {
  it("refuses an unknown parameter over HTTP with OpenAI's unknown_parameter error", async () => {
    const marker = `unknown-http-${testId()}`;
    const answer = await refusal(await create({ model: "deltagate-sim", input: marker, max_tokens: 10 }));
    expect(answer).toEqual({
      status: 400,
      error: {
        type: "invalid_request_error",
        code: "unknown_parameter",
        message: "Unknown parameter: 'max_tokens'.",
        param: "max_tokens",
      },
    });
    expect(await simulatorRequests(inject("simulatorUrl"), marker)).toEqual([]);
  });

  it.each([
    ["access_programs", { cyber: "standard" }],
    ["background_options", { completion_window: "2h" }],
  ])("refuses %s, one of OpenAI's parameters it does not serve, by name", async (name, value) => {
    const marker = `unserved-${testId()}`;
    const answer = await refusal(await create({ model: "deltagate-sim", input: marker, [name]: value }));
    expect(answer).toMatchObject({
      status: 400,
      error: { type: "invalid_request_error", code: "unsupported_parameter", param: name },
    });
    expect(await simulatorRequests(inject("simulatorUrl"), marker)).toEqual([]);
  });

  it("refuses background_options beside background: true over HTTP, where background mode is served, saying why", async () => {
    const marker = `background-options-${testId()}`;
    const answer = await refusal(
      await create({
        model: "deltagate-sim",
        input: marker,
        background: true,
        background_options: { completion_window: "2h" },
      }),
    );
    expect(answer).toEqual({
      status: 400,
      error: {
        type: "invalid_request_error",
        code: "unsupported_parameter",
        message:
          "background_options (a completion window, a continuation id) is not supported by Deltagate: a background response starts at once.",
        param: "background_options",
      },
    });
    expect(await simulatorRequests(inject("simulatorUrl"), marker)).toEqual([]);
  });

  it("answers an unknown parameter over WebSocket with an error event; the socket serves the next turn", async () => {
    const ws = await connect({ session: uniqueSession("unknown-ws") });
    ws.send({ type: "response.create", model: "sim-ws", input: "hi", tempreature: 0.2 });
    const [error] = await ws.turn(0);
    expect(error).toEqual({
      type: "error",
      status: 400,
      error: {
        type: "invalid_request_error",
        code: "unknown_parameter",
        message: "Unknown parameter: 'tempreature'.",
        param: "tempreature",
      },
    });
    ws.send({
      type: "response.create",
      model: "sim-ws",
      input: "hi [sim:tokens=3]",
      client_metadata: { turn_id: "t1" },
    });
    const frames = await ws.turn(1);
    expect(frames.at(-1)?.type).toBe("response.completed");
    ws.close();
  });

  it("forwards prompt to a Responses WebSocket-mode upstream and echoes it", async () => {
    const marker = `prompt-ws-${testId()}`;
    const ws = await connect({ session: uniqueSession("prompt-ws") });
    ws.send({ type: "response.create", model: "sim-ws", input: `${marker} [sim:tokens=3]`, prompt: PROMPT });
    const frames = await ws.turn(0);
    const final = frames.at(-1) as unknown as { type: string; response: { prompt?: unknown } };
    expect(final.type).toBe("response.completed");
    expect(final.response.prompt).toEqual(PROMPT);
    const [sent] = await simulatorRequests(inject("simulatorUrl"), marker);
    expect((sent?.body as { prompt?: unknown } | undefined)?.prompt).toEqual(PROMPT);
    ws.close();
  });

  it("forwards prompt and prompt_cache_options to a Responses HTTP upstream", async () => {
    const marker = `prompt-http-${testId()}`;
    const options = { mode: "explicit", ttl: "30m" };
    const created = await create({
      model: "deltagate-sim",
      input: `${marker} [sim:tokens=3]`,
      prompt: PROMPT,
      prompt_cache_options: options,
    });
    expect(created.status).toBe(200);
    expect(((await created.json()) as { prompt: unknown }).prompt).toEqual(PROMPT);
    const [sent] = await simulatorRequests(inject("simulatorUrl"), marker);
    expect(sent?.body).toMatchObject({ prompt: PROMPT, prompt_cache_options: options });
  });

  it("refuses prompt on a Chat Completions route, over HTTP and WebSocket, before the upstream", async () => {
    const marker = `prompt-chat-${testId()}`;
    const expected = {
      type: "invalid_request_error",
      code: "unsupported_parameter",
      message:
        "Unsupported parameter: 'prompt' is not supported with model 'sim-chat', which is served over Chat Completions.",
      param: "prompt",
    };
    expect(await refusal(await create({ model: "sim-chat", input: marker, prompt: PROMPT }))).toEqual({
      status: 400,
      error: expected,
    });
    const ws = await connect({ session: uniqueSession("prompt-chat") });
    ws.send({ type: "response.create", model: "sim-chat", input: marker, prompt: PROMPT });
    expect(await ws.turn(0)).toEqual([{ type: "error", status: 400, error: expected }]);
    ws.close();
    expect(await simulatorRequests(inject("simulatorUrl"), marker)).toEqual([]);
  });

  it("refuses a hosted tool on a Chat Completions route, naming tools[i].type, rather than dropping it", async () => {
    const marker = `tool-chat-${testId()}`;
    const ws = await connect({ session: uniqueSession("tool-chat") });
    ws.send({
      type: "response.create",
      model: "sim-chat",
      input: marker,
      tools: [SHELL_TOOL, { type: "web_search" }],
    });
    const [error] = await ws.turn(0);
    expect(error).toMatchObject({
      type: "error",
      status: 400,
      error: { code: "unsupported_value", param: "tools[1].type" },
    });
    expect(JSON.stringify(error)).toContain("'web_search'");
    const answer = await refusal(
      await create({ model: "sim-chat", input: marker, tools: [{ type: "mcp", server_label: "x" }] }),
    );
    expect(answer).toMatchObject({
      status: 400,
      error: { code: "unsupported_value", param: "tools[0].type" },
    });
    // The same tools go to a Responses route as sent.
    ws.send({
      type: "response.create",
      model: "sim-ws",
      input: `${marker} [sim:tokens=3]`,
      tools: [SHELL_TOOL, { type: "web_search" }],
    });
    expect((await ws.turn(1)).at(-1)?.type).toBe("response.completed");
    ws.close();
    const recorded = await simulatorRequests(inject("simulatorUrl"), marker);
    expect(recorded.map((r) => r.path)).not.toContain("/v1/chat/completions");
  });
});

describe("create parameters on an Anthropic Messages route", () => {
  it("refuses prompt, prompt_cache_options and a hosted tool before the upstream, over HTTP and WebSocket", async () => {
    const marker = `claude-params-${testId()}`;
    const prompt = await refusal(await create({ model: "sim-claude", input: marker, prompt: PROMPT }));
    expect(prompt).toEqual({
      status: 400,
      error: {
        type: "invalid_request_error",
        code: "unsupported_parameter",
        message:
          "Unsupported parameter: 'prompt' is not supported with model 'sim-claude', which is served over Anthropic Messages.",
        param: "prompt",
      },
    });
    const options = await refusal(
      await create({ model: "sim-claude", input: marker, prompt_cache_options: { mode: "explicit" } }),
    );
    expect(options).toMatchObject({ status: 400, error: { param: "prompt_cache_options" } });
    const ws = await connect({ session: uniqueSession("claude-params") });
    ws.send({
      type: "response.create",
      model: "sim-claude",
      input: marker,
      tools: [SHELL_TOOL, { type: "mcp", server_label: "x" }],
    });
    const [error] = await ws.turn(0);
    expect(error).toMatchObject({
      type: "error",
      status: 400,
      error: { code: "unsupported_value", param: "tools[1].type" },
    });
    expect(JSON.stringify(error)).toContain("tool type 'mcp'");
    ws.close();
    expect(await simulatorRequests(inject("anthropicSimulatorUrl"), marker)).toEqual([]);
  });
});
