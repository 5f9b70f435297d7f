/**
 * The Gemini route end to end (issue #26, item 4 and the Gemini parts of items 3, 5 and 6):
 * Responses clients (Deltagate's WebSocket, the `openai` SDK over HTTP) on model `sim-gemini*`,
 * routed to the simulator's `streamGenerateContent` (vitest.config.ts), which answers Gemini 3's
 * 400 when the first function call of a step in the current turn comes back without its thought
 * signature, and refuses an altered one and unpaired function responses. Checks what reaches the
 * upstream through its recorder: each request carries every earlier call's signature byte-exact
 * (chained, across a reconnect, from a client that resends everything, from a stateless client
 * holding the encrypted content), implicit caching shows as cached tokens in usage, and errors come
 * back in OpenAI's shapes with the retry rules of every route (503 and 429 retried, `RetryInfo`
 * honoured, 400 not retried).
 */
import { describe, expect, inject, it } from "vitest";
import { SHELL_TOOL } from "../support/fixtures.ts";
import { sdkClient } from "../support/sdk-client.ts";
import { testId } from "../support/test-id.ts";
import {
  connect,
  type Frame,
  simulatorRequests,
  uniqueSession,
  validateWithSdk,
} from "../support/ws-client.ts";

const MODEL = "sim-gemini";

type Output = Array<Record<string, unknown>>;
type Part = { text?: string; thought?: boolean; thoughtSignature?: string; [field: string]: unknown };
type Body = {
  contents: Array<{ role: string; parts: Part[] }>;
  systemInstruction?: { parts: Part[] };
  tools?: Array<{ functionDeclarations: Array<Record<string, unknown>> }>;
  generationConfig?: { thinkingConfig?: Record<string, unknown>; maxOutputTokens?: number };
};
type Usage = {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
};

function responseOf(frames: Frame[]) {
  return (
    frames.at(-1) as unknown as {
      response: { id: string; status: string; output: Output; usage: Usage; error: unknown };
    }
  ).response;
}

async function recorded(marker: string): Promise<Array<{ body: Body; status: number | null; at: number }>> {
  const records = await simulatorRequests(inject("geminiSimulatorUrl"), marker);
  for (const record of records) {
    expect(record.path).toMatch(/^\/v1beta\/models\/gemini-[^/]+:streamGenerateContent$/);
  }
  return records as unknown as Array<{ body: Body; status: number | null; at: number }>;
}

/** The function-call parts of a request, in order. */
const callParts = (body: Body) =>
  body.contents.flatMap((content) => content.parts.filter((part) => part.functionCall));

describe("Gemini upstream", () => {
  it("runs a 5-turn tool loop across a reconnect; every call goes back with its signature byte-exact", async () => {
    const marker = `gemini-loop-${testId()}`;
    const session = uniqueSession("gemini-loop");
    let ws = await connect({ session });
    let turnOnSocket = 0;
    const settings = {
      model: MODEL,
      instructions: "Be brief.",
      tools: [SHELL_TOOL],
      reasoning: { effort: "low" },
    };
    ws.send({ type: "response.create", ...settings, input: `${marker}: run \`ls\` [sim:tools=4]` });
    let previous = responseOf(await ws.turn(0));
    for (let turn = 1; turn <= 4; turn++) {
      expect(previous.status, `turn ${turn}`).toBe("completed");
      if (turn === 3) {
        ws.close(); // a reconnect: the next socket continues the chain from the session's storage
        ws = await connect({ session });
        turnOnSocket = -1;
      }
      // The signature rides in a reasoning item right before the call it signs.
      const [reasoning, call] = previous.output;
      expect(reasoning).toMatchObject({ type: "reasoning", summary: [] });
      expect(reasoning?.encrypted_content).toBeUndefined(); // not asked for with `include`
      expect(call).toMatchObject({ type: "function_call", name: "exec_command", arguments: '{"cmd":"ls"}' });
      ws.send({
        type: "response.create",
        ...settings,
        previous_response_id: previous.id,
        input: [{ type: "function_call_output", call_id: call?.call_id, output: `out ${turn}` }],
      });
      turnOnSocket++;
      previous = responseOf(await ws.turn(turnOnSocket));
    }
    expect(previous.status).toBe("completed");
    expect(previous.output.at(-1)).toMatchObject({ type: "message" });
    const bodies = (await recorded(marker)).map((record) => {
      expect(record.status).toBe(200); // the simulator answers 400 to a call without its signature
      return record.body;
    });
    expect(bodies).toHaveLength(5);
    for (const [turn, body] of bodies.entries()) {
      expect(body.systemInstruction).toEqual({ parts: [{ text: "Be brief." }] });
      expect(body.generationConfig?.thinkingConfig).toEqual({ thinkingLevel: "low" });
      expect(body.tools?.[0]?.functionDeclarations[0]).toMatchObject({
        name: "exec_command",
        parametersJsonSchema: SHELL_TOOL.parameters,
      });
      // user, then (model call, user function response) per earlier turn.
      expect(body.contents.map((content) => content.role)).toEqual([
        "user",
        ...Array.from({ length: turn }, () => ["model", "user"]).flat(),
      ]);
      const calls = callParts(body);
      expect(calls).toHaveLength(turn);
      for (const [index, part] of calls.entries()) {
        expect(typeof part.thoughtSignature, `turn ${turn} call ${index}`).toBe("string");
        const answer = body.contents[2 * index + 2]?.parts[0]?.functionResponse as Record<string, unknown>;
        const call = part.functionCall as Record<string, unknown>;
        expect(answer).toEqual({
          id: call.id,
          name: "exec_command",
          response: { output: `out ${index + 1}` },
        });
      }
      if (turn > 0) {
        const before = callParts(bodies[turn - 1]!).map((part) => JSON.stringify(part));
        expect(calls.slice(0, before.length).map((part) => JSON.stringify(part))).toEqual(before);
      }
    }
    ws.close();
  });

  it("reads the prefix the turn before sent from Gemini's implicit cache and reports it", async () => {
    const marker = `gemini-cache-${testId()}`;
    const instructions = `${marker} You are a careful assistant. `.repeat(20);
    const ws = await connect({ session: uniqueSession("gemini-cache") });
    const settings = { model: MODEL, instructions, tools: [SHELL_TOOL], reasoning: { effort: "low" } };
    ws.send({ type: "response.create", ...settings, input: "run `ls` [sim:tools=3]" });
    const first = responseOf(await ws.turn(0));
    expect(first.usage.input_tokens_details.cached_tokens).toBe(0);
    expect(first.usage.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
    let previous = first;
    for (let turn = 1; turn <= 3; turn++) {
      const call = previous.output.find((item) => item.type === "function_call");
      ws.send({
        type: "response.create",
        ...settings,
        previous_response_id: previous.id,
        input: [{ type: "function_call_output", call_id: call?.call_id, output: "file-a\nfile-b" }],
      });
      previous = responseOf(await ws.turn(turn));
      const { usage } = previous;
      // Everything but this turn's function response was the turn before's prompt.
      expect(usage.input_tokens_details.cached_tokens, `turn ${turn}`).toBeGreaterThan(
        usage.input_tokens * 0.8,
      );
      expect(usage.output_tokens).toBeGreaterThan(usage.output_tokens_details.reasoning_tokens);
    }
    ws.close();
  });

  it("restores the signatures for an HTTP client that resends everything without encrypted content", async () => {
    const marker = `gemini-resend-${testId()}`;
    const client = sdkClient(undefined, { "session-id": uniqueSession("gemini-resend") });
    const settings = { model: MODEL, tools: [SHELL_TOOL as never], reasoning: { effort: "low" as const } };
    const input: unknown[] = [{ role: "user", content: `${marker}: run \`ls\` [sim:tools=3]` }];
    for (let turn = 0; turn < 4; turn++) {
      const response = await client.responses.create({ ...settings, input: input as never });
      expect(response.status, `turn ${turn}`).toBe("completed");
      for (const item of response.output) {
        if (item.type === "reasoning") expect(item.encrypted_content ?? undefined).toBeUndefined();
        const { id: _id, status: _status, ...sent } = item as unknown as Record<string, unknown>;
        input.push(item.type === "reasoning" ? item : sent);
      }
      const call = response.output.find((item) => item.type === "function_call");
      if (call?.type === "function_call")
        input.push({ type: "function_call_output", call_id: call.call_id, output: "ok" });
    }
    const bodies = (await recorded(marker)).map((record) => {
      expect(record.status).toBe(200);
      return record.body;
    });
    expect(bodies).toHaveLength(4);
    expect(callParts(bodies[3]!)).toHaveLength(3);
    expect(callParts(bodies[3]!).every((part) => typeof part.thoughtSignature === "string")).toBe(true);
  });

  it("answers Gemini's 400, in OpenAI's shape, to a client that drops the reasoning items", async () => {
    const marker = `gemini-dropped-${testId()}`;
    const client = sdkClient();
    const settings = { model: MODEL, tools: [SHELL_TOOL as never], store: false };
    const first = await client.responses.create({
      ...settings,
      input: `${marker}: run \`ls\` [sim:tools=2]`,
    });
    const call = first.output.find((item) => item.type === "function_call");
    const refused = await client.responses
      .create({
        ...settings,
        input: [
          { role: "user", content: `${marker}: run \`ls\` [sim:tools=2]` },
          ...(first.output.filter((item) => item.type !== "reasoning") as never[]),
          {
            type: "function_call_output",
            call_id: call?.type === "function_call" ? call.call_id : "",
            output: "ok",
          },
        ],
      })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 400, code: "invalid_argument" });
    expect(String((refused as Error).message)).toContain("missing a thought_signature");
    expect((await recorded(marker)).map((record) => record.status)).toEqual([200, 400]); // not retried
  });

  it("gives a client that asks for it the signatures as encrypted content, and takes them back", async () => {
    const marker = `gemini-include-${testId()}`;
    const client = sdkClient();
    const settings = {
      model: MODEL,
      tools: [SHELL_TOOL as never],
      include: ["reasoning.encrypted_content" as const],
      store: false,
    };
    const first = await client.responses.create({
      ...settings,
      input: `${marker}: run \`ls\` [sim:tools=1]`,
    });
    const reasoning = first.output.find((item) => item.type === "reasoning");
    expect(reasoning?.type === "reasoning" ? reasoning.encrypted_content : "").toMatch(
      /^gemini-thought\.v1\./,
    );
    const call = first.output.find((item) => item.type === "function_call");
    const second = await client.responses.create({
      ...settings,
      input: [
        { role: "user", content: `${marker}: run \`ls\` [sim:tools=1]` },
        ...(first.output as never[]),
        {
          type: "function_call_output",
          call_id: call?.type === "function_call" ? call.call_id : "",
          output: "ok",
        },
      ],
    });
    expect(second.status).toBe("completed");
    const bodies = (await recorded(marker)).map((record) => record.body);
    expect(typeof callParts(bodies[1]!)[0]?.thoughtSignature).toBe("string");
  });

  it("maps 503 to a retried upstream_overloaded and 429 to a retried rate limit honouring RetryInfo", async () => {
    const overloaded = `gemini-503-${testId()}`;
    const ws = await connect({ session: uniqueSession("gemini-errors") });
    ws.send({ type: "response.create", model: MODEL, input: `${overloaded} [sim:fail=status:503]` });
    expect(responseOf(await ws.turn(0))).toMatchObject({
      status: "failed",
      error: { code: "upstream_overloaded" },
    });
    expect(await recorded(overloaded)).toHaveLength(2); // max_retries: 1

    const limited = `gemini-429-${testId()}`;
    ws.send({
      type: "response.create",
      model: MODEL,
      input: `${limited} [sim:fail=status:429] [sim:retry_after=1]`,
    });
    expect(responseOf(await ws.turn(1))).toMatchObject({
      status: "failed",
      error: { code: "rate_limit_exceeded" },
    });
    const attempts = await recorded(limited);
    expect(attempts).toHaveLength(2);
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(1000);

    const cut = `gemini-midstream-${testId()}`;
    ws.send({
      type: "response.create",
      model: MODEL,
      input: `${cut} [sim:tokens=60] [sim:delta_chars=4] [sim:fail=midstream]`,
    });
    expect(responseOf(await ws.turn(2))).toMatchObject({ status: "failed" });
    expect(await recorded(cut)).toHaveLength(1); // output had started: never retried
    ws.close();
  });

  it("reports a model the upstream does not serve, and refuses what the route cannot carry", async () => {
    const client = sdkClient();
    const unknown = await client.responses
      .create({ model: "sim-gemini-unknown", input: "hi" })
      .catch((e: unknown) => e);
    expect(unknown).toMatchObject({ status: 404, code: "model_not_found" });
    const refused = await client.responses
      .create({ model: MODEL, input: "hi", top_logprobs: 3 })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 400, code: "unsupported_content", param: "top_logprobs" });
    const ws = await connect({ session: uniqueSession("gemini-refuse") });
    ws.send({ type: "response.create", model: MODEL, input: "hi", tools: [{ type: "web_search" }] });
    const frames = await ws.turn(0);
    expect(frames).toHaveLength(1);
    // Refused as every function-tools-only route refuses it (src/upstream/route-capabilities.ts).
    expect(frames[0]).toMatchObject({
      type: "error",
      status: 400,
      error: { code: "unsupported_value", param: "tools[0].type" },
    });
    ws.close();
  });

  it("streams thought summaries and text the openai SDK accumulates; a Gemini 2.5 model gets a budget", async () => {
    const marker = `gemini-sdk-${testId()}`;
    const ws = await connect({ session: uniqueSession("gemini-sdk") });
    ws.send({
      type: "response.create",
      model: "sim-gemini-25",
      reasoning: { effort: "medium", summary: "auto" },
      input: `${marker} say something [sim:tokens=20]`,
    });
    const frames = await ws.turn(0);
    const final = await validateWithSdk(frames);
    expect(final.output_text.length).toBeGreaterThan(0);
    expect(final.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    const reasoning = final.output[0];
    expect(reasoning?.type === "reasoning" ? reasoning.summary[0]?.text : "").toMatch(
      /^Thinking after 0 call/,
    );
    expect(final.usage?.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
    const [request] = await recorded(marker);
    expect(request?.body.generationConfig?.thinkingConfig).toEqual({
      thinkingBudget: 8192,
      includeThoughts: true,
    });
    ws.close();
  });
});
