/**
 * `POST /v1/responses/input_tokens` (issue #17 item 4; src/engine/compact-endpoints.ts): the
 * `openai` SDK's `responses.inputTokens.count()`, forwarded to an upstream that counts (the
 * simulator, `sim-cmp-up*` routes) or counted by Deltagate with its tokenizer, and in both cases
 * the count a turn reports for the same input.
 */
import { describe, expect, it } from "vitest";
import { sdkClient } from "../support/sdk-client.ts";
import { testId } from "../support/test-id.ts";
import { KEY_A, workerFetch } from "../support/ws-client.ts";

const tools = [
  {
    type: "function" as const,
    name: "exec_command",
    strict: false,
    parameters: { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] },
  },
];

describe("POST /v1/responses/input_tokens", () => {
  it("forwarded: the upstream's count equals the input_tokens of a turn with the same input", async () => {
    const client = sdkClient();
    const input = `Count me, upstream ${testId()} [sim:tools=0] [sim:tokens=3]`;
    const instructions = "You are terse.";
    const counted = await client.responses.inputTokens.count({
      model: "sim-cmp-up",
      input,
      instructions,
      tools,
    });
    expect(counted.object).toBe("response.input_tokens");
    const turn = await client.responses.create({ model: "sim-cmp-up", input, instructions, tools });
    expect(counted.input_tokens).toBe(turn.usage?.input_tokens);
  });

  it("counted by Deltagate: equals the usage Deltagate reports for a turn whose upstream reports none", async () => {
    const client = sdkClient();
    const input = `Count me, Deltagate ${testId()} [sim:tools=0] [sim:tokens=3] [sim:no_usage=1]`;
    const instructions = "You are terse.";
    const counted = await client.responses.inputTokens.count({
      model: "sim-chat",
      input,
      instructions,
      tools,
    });
    const turn = await client.responses.create({ model: "sim-chat", input, instructions, tools });
    expect(counted.input_tokens).toBeGreaterThan(0);
    expect(counted.input_tokens).toBe(turn.usage?.input_tokens);
  });

  it("counts the chain of previous_response_id, and a compacted chain by its summary", async () => {
    const client = sdkClient();
    const first = await client.responses.create({ model: "sim-chat", input: "First turn [sim:tokens=5]" });
    const alone = await client.responses.inputTokens.count({ model: "sim-chat", input: "Next" });
    const chained = await client.responses.inputTokens.count({
      model: "sim-chat",
      previous_response_id: first.id,
      input: "Next",
    });
    expect(chained.input_tokens).toBeGreaterThan(alone.input_tokens);
    const compacted = await client.responses.compact({ model: "sim-chat", previous_response_id: first.id });
    const window = await client.responses.inputTokens.count({
      model: "sim-chat",
      input: [...(compacted.output as never[]), { role: "user", content: "Next" }],
    });
    expect(window.input_tokens).toBeGreaterThan(alone.input_tokens);
  });

  it("answers 400 for a body that is not valid, without a model too", async () => {
    const res = await workerFetch("/v1/responses/input_tokens", {
      method: "POST",
      headers: { authorization: `Bearer ${KEY_A}`, "content-type": "application/json" },
      body: JSON.stringify({ input: 42 }),
    });
    expect(res.status).toBe(400);
    const ok = await sdkClient().responses.inputTokens.count({ input: "no model given" });
    expect(ok.input_tokens).toBeGreaterThan(0);
  });
});
