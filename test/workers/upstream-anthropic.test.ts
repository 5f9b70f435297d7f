/**
 * The Anthropic Messages route end to end (issue #26, items 1–3 and 6, Anthropic part): Responses
 * clients (Deltagate's WebSocket, the `openai` SDK over HTTP) on model `sim-claude*`, routed to
 * the simulator's `/v1/messages` (vitest.config.ts), which refuses a thinking block whose
 * signature does not verify, a tool loop whose assistant turn lost its thinking block, unpaired
 * tool calls and same-role neighbours. Checks what reaches the upstream through its recorder: each
 * request carries every earlier turn's thinking blocks byte-exact, cache breakpoints make every
 * turn read the prefix the turn before wrote (cached tokens in usage), errors come back in
 * OpenAI's shapes with the retry rules of every route (529 and 429 retried, `retry-after` honoured,
 * 400 not retried).
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

const MODEL = "sim-claude";

type Output = Array<Record<string, unknown>>;
type Block = { type: string; [field: string]: unknown };
type Body = {
  model: string;
  max_tokens: number;
  thinking?: { type: string; budget_tokens: number };
  system?: Block[];
  tools?: Block[];
  messages: Array<{ role: string; content: Block[] }>;
};

function responseOf(frames: Frame[]) {
  return (
    frames.at(-1) as unknown as {
      response: { id: string; status: string; output: Output; usage: Record<string, unknown> };
    }
  ).response;
}

async function recorded(marker: string): Promise<Array<{ body: Body; status: number | null; at: number }>> {
  const records = await simulatorRequests(inject("anthropicSimulatorUrl"), marker);
  for (const record of records) expect(record.path).toBe("/v1/messages");
  return records as unknown as Array<{ body: Body; status: number | null; at: number }>;
}

const thinkingBlocks = (body: Body) =>
  body.messages.flatMap((message) => message.content.filter((block) => block.type.endsWith("thinking")));

describe("Anthropic Messages upstream", () => {
  it("runs a 5-turn tool loop with thinking, across a reconnect; every request carries the earlier thinking blocks byte-exact", async () => {
    const marker = `claude-loop-${testId()}`;
    const session = uniqueSession("claude-loop");
    let ws = await connect({ session });
    let turnOnSocket = 0;
    const settings = {
      model: MODEL,
      instructions: "Be brief.",
      tools: [SHELL_TOOL],
      reasoning: { effort: "low" },
    };
    ws.send({
      type: "response.create",
      ...settings,
      input: `${marker}: run \`ls\` [sim:tools=4] [sim:redacted=1]`,
    });
    let previous = responseOf(await ws.turn(0));
    for (let turn = 1; turn <= 4; turn++) {
      expect(previous.status, `turn ${turn}`).toBe("completed");
      if (turn === 3) {
        ws.close(); // a reconnect: the next socket continues the chain from the session's storage
        ws = await connect({ session });
        turnOnSocket = -1;
      }
      // One reasoning item for the run of blocks (redacted, then thinking: one summary part).
      const [reasoning, call] = previous.output;
      expect(reasoning).toMatchObject({ type: "reasoning", summary: [{ type: "summary_text" }] });
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
      expect(record.status).toBe(200);
      return record.body;
    });
    expect(bodies).toHaveLength(5);
    for (const [turn, body] of bodies.entries()) {
      expect(body).toMatchObject({
        model: "claude-sim-1",
        thinking: { type: "enabled", budget_tokens: 2048 },
      });
      expect(body.system).toMatchObject([{ type: "text", text: "Be brief." }]);
      // Two blocks (redacted, thinking) per earlier turn, unchanged from request to request.
      expect(thinkingBlocks(body)).toHaveLength(2 * turn);
      if (turn > 0) {
        const before = thinkingBlocks(bodies[turn - 1]!).map((block) => JSON.stringify(block));
        const now = thinkingBlocks(body).map((block) => JSON.stringify(block));
        expect(now.slice(0, before.length)).toEqual(before);
      }
      // Roles alternate; every assistant turn opens with its thinking.
      for (const [index, message] of body.messages.entries()) {
        expect(message.role).toBe(index % 2 === 0 ? "user" : "assistant");
      }
      for (const message of body.messages.filter((m) => m.role === "assistant")) {
        expect(message.content.map((block) => block.type)).toEqual([
          "redacted_thinking",
          "thinking",
          "tool_use",
        ]);
      }
    }
    ws.close();
  });

  it("reads the cached prefix from turn 2 on and reports it as cached tokens", async () => {
    const marker = `claude-cache-${testId()}`;
    const instructions = `${marker} You are a careful assistant. `.repeat(20);
    const ws = await connect({ session: uniqueSession("claude-cache") });
    ws.send({
      type: "response.create",
      model: MODEL,
      instructions,
      tools: [SHELL_TOOL],
      input: "run `ls` [sim:tools=2]",
    });
    const first = responseOf(await ws.turn(0));
    const firstUsage = first.usage as {
      input_tokens: number;
      input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
    };
    expect(firstUsage.input_tokens_details.cached_tokens).toBe(0);
    // The prefix the first turn wrote to Claude's cache, as OpenAI's usage names it.
    expect(firstUsage.input_tokens_details.cache_write_tokens).toBeGreaterThan(0);
    let previous = first;
    for (let turn = 1; turn <= 2; turn++) {
      const call = previous.output.find((item) => item.type === "function_call");
      ws.send({
        type: "response.create",
        model: MODEL,
        instructions,
        tools: [SHELL_TOOL],
        previous_response_id: previous.id,
        input: [{ type: "function_call_output", call_id: call?.call_id, output: "file-a\nfile-b" }],
      });
      previous = responseOf(await ws.turn(turn));
      const usage = previous.usage as {
        input_tokens: number;
        input_tokens_details: { cached_tokens: number };
      };
      // Everything but this turn's own new blocks was written by the turn before.
      expect(usage.input_tokens_details.cached_tokens, `turn ${turn}`).toBeGreaterThan(
        usage.input_tokens * 0.8,
      );
    }
    const bodies = (await recorded(marker)).map((record) => record.body);
    for (const body of bodies) {
      const marks = [
        ...(body.tools ?? []),
        ...(body.system ?? []),
        ...body.messages.flatMap((m) => m.content),
      ].filter((block) => block.cache_control);
      expect(marks.length).toBeGreaterThan(0);
      expect(marks.length).toBeLessThanOrEqual(4);
      expect(body.system?.at(-1)?.cache_control).toEqual({ type: "ephemeral" });
      expect(body.messages.at(-1)?.content.at(-1)?.cache_control).toEqual({ type: "ephemeral" });
    }
    ws.close();
  });

  it("sends no breakpoint on a route that turned them off, and reports no cached tokens", async () => {
    const marker = `claude-nocache-${testId()}`;
    const client = sdkClient();
    const instructions = `${marker} You are a careful assistant. `.repeat(20);
    const first = await client.responses.create({
      model: "sim-claude-nocache",
      instructions,
      input: "hello [sim:tokens=5]",
    });
    const second = await client.responses.create({
      model: "sim-claude-nocache",
      instructions,
      previous_response_id: first.id,
      input: "again [sim:tokens=5]",
    });
    expect(second.usage?.input_tokens_details.cached_tokens).toBe(0);
    for (const { body } of await recorded(marker))
      expect(JSON.stringify(body)).not.toContain("cache_control");
  });

  it("restores thinking blocks for an HTTP client that resends everything without encrypted content", async () => {
    const marker = `claude-resend-${testId()}`;
    const client = sdkClient(undefined, { "session-id": uniqueSession("claude-resend") });
    const settings = { model: MODEL, tools: [SHELL_TOOL as never], reasoning: { effort: "low" as const } };
    const input: unknown[] = [{ role: "user", content: `${marker}: run \`ls\` [sim:tools=2]` }];
    for (let turn = 0; turn < 3; turn++) {
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
    expect(bodies).toHaveLength(3);
    expect(thinkingBlocks(bodies[2]!)).toHaveLength(2);
    expect(thinkingBlocks(bodies[2]!).every((block) => typeof block.signature === "string")).toBe(true);
  });

  it("gives a client that asks for it the thinking block as encrypted content, and takes it back", async () => {
    const marker = `claude-include-${testId()}`;
    const client = sdkClient();
    const first = await client.responses.create({
      model: MODEL,
      tools: [SHELL_TOOL as never],
      reasoning: { effort: "low" },
      include: ["reasoning.encrypted_content"],
      store: false,
      input: `${marker}: run \`ls\` [sim:tools=1]`,
    });
    const reasoning = first.output.find((item) => item.type === "reasoning");
    expect(reasoning?.type === "reasoning" ? reasoning.encrypted_content : "").toMatch(
      /^claude-thinking\.v1\./,
    );
    const call = first.output.find((item) => item.type === "function_call");
    const second = await client.responses.create({
      model: MODEL,
      tools: [SHELL_TOOL as never],
      reasoning: { effort: "low" },
      store: false,
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
    expect(thinkingBlocks((await recorded(marker))[1]!.body)).toHaveLength(1);
  });

  it("maps 529 to a retried 503 and 429 to a retried rate limit honouring retry-after", async () => {
    const overloaded = `claude-529-${testId()}`;
    const ws = await connect({ session: uniqueSession("claude-errors") });
    ws.send({ type: "response.create", model: MODEL, input: `${overloaded} [sim:fail=status:529]` });
    const failed = responseOf(await ws.turn(0));
    expect(failed).toMatchObject({ status: "failed", error: { code: "upstream_overloaded" } });
    expect(await recorded(overloaded)).toHaveLength(2); // max_retries: 1

    const limited = `claude-429-${testId()}`;
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

    const invalid = `claude-400-${testId()}`;
    ws.send({ type: "response.create", model: MODEL, input: `${invalid} [sim:fail=status:400]` });
    expect(responseOf(await ws.turn(2))).toMatchObject({ status: "failed" });
    expect(await recorded(invalid)).toHaveLength(1);
    ws.close();
  });

  it("reports a model the upstream does not serve, and refuses what the route cannot carry", async () => {
    const client = sdkClient();
    const unknown = await client.responses
      .create({ model: "sim-claude-unknown", input: "hi" })
      .catch((e: unknown) => e);
    expect(unknown).toMatchObject({ status: 404 });
    // Refused before the turn is accepted: HTTP 400, a request-level `error` over WebSocket.
    const refused = await client.responses
      .create({ model: MODEL, input: "hi", top_logprobs: 3 })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 400, code: "unsupported_content", param: "top_logprobs" });
    const ws = await connect({ session: uniqueSession("claude-refuse") });
    ws.send({ type: "response.create", model: MODEL, input: "hi", tools: [{ type: "web_search" }] });
    const frames = await ws.turn(0);
    expect(frames).toHaveLength(1);
    expect(frames[0]).toMatchObject({
      type: "error",
      status: 400,
      error: { code: "unsupported_value", param: "tools[0].type" },
    });
    ws.close();
  });

  it("streams events the openai SDK accumulates", async () => {
    const ws = await connect({ session: uniqueSession("claude-sdk") });
    ws.send({
      type: "response.create",
      model: MODEL,
      reasoning: { effort: "low" },
      input: "say something [sim:tokens=20]",
    });
    const frames = await ws.turn(0);
    const final = await validateWithSdk(frames);
    expect(final.output_text.length).toBeGreaterThan(0);
    expect(final.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    ws.close();
  });
});
