/**
 * The reference simulator's `POST /v1/responses` (JSON + SSE) against the real openai-node
 * client: event ordering accepted by the SDK accumulator, tool calls with schema-valid
 * arguments, stored chains, pairing errors, fail directives and client-abort recording; every
 * Response object (JSON, each lifecycle event) carries the Open Responses `ResponseResource`
 * fields (`completed_at` and `usage` null until the end, penalties, function tools with `strict`).
 */
import OpenAI from "openai";
import type { ResponseFunctionToolCall, ResponseInputItem } from "openai/resources/responses/responses";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type RunningSimulator, startSimulator } from "../../simulator/server.ts";
import { expectOpenResponsesResource } from "../support/sdk-response-fields.ts";

let sim: RunningSimulator;
let client: OpenAI;

const shellTool = {
  type: "function" as const,
  name: "exec_command",
  strict: false,
  parameters: {
    type: "object",
    properties: { cmd: { type: "string" }, yield_time_ms: { type: "integer", maximum: 30_000 } },
    required: ["cmd"],
  },
};

beforeAll(async () => {
  sim = await startSimulator({ port: 0, quiet: true, decodeTokensPerSecond: 20_000 });
  client = new OpenAI({ apiKey: "sim-key", baseURL: `${sim.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await sim.close();
});
beforeEach(() => {
  sim.recorder.clear();
});

describe("simulator POST /v1/responses", () => {
  it("streams a text answer the SDK accumulates, with contiguous sequence numbers", async () => {
    const stream = client.responses.stream({
      model: "deltagate-sim",
      input: "Say something [sim:tokens=25]",
    });
    const seqs: number[] = [];
    const types: string[] = [];
    for await (const event of stream) {
      seqs.push(event.sequence_number);
      types.push(event.type);
    }
    const final = await stream.finalResponse();
    expect(seqs).toEqual(seqs.map((_, i) => i));
    expect(types.slice(0, 4)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
    ]);
    expect(types.filter((t) => t === "response.output_text.delta").length).toBeGreaterThan(3);
    expect(types.at(-1)).toBe("response.completed");
    expect(final.id).toMatch(/^resp_/);
    expect(final.status).toBe("completed");
    expect(final.output[0]?.id).toMatch(/^msg_/);
    expect(final.output_text.split(" ")).toHaveLength(25);
    expect(final.usage?.output_tokens).toBe(25);
    expect(final.usage?.total_tokens).toBe((final.usage?.input_tokens ?? 0) + 25);
  });

  it("sends Response objects with every ResponseResource field, echoing penalties and strict", async () => {
    const body = {
      model: "deltagate-sim",
      input: "Say something [sim:tokens=5]",
      presence_penalty: 0.5,
      tools: [{ type: "function", name: "noop", parameters: { type: "object", properties: {} } }],
      tool_choice: "none",
    };
    const post = (extra: Record<string, unknown>) =>
      fetch(`${sim.url}/v1/responses`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer sim-key" },
        body: JSON.stringify({ ...body, ...extra }),
      });
    const json = (await (await post({})).json()) as Record<string, unknown>;
    expectOpenResponsesResource(json, "JSON");
    expect(json).toMatchObject({ presence_penalty: 0.5, frequency_penalty: 0, top_logprobs: 0 });
    expect(json.tools).toEqual([{ ...body.tools[0], description: null, strict: null }]);
    expect(json.completed_at).toEqual(expect.any(Number));
    const text = await (await post({ stream: true })).text();
    const events = text
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice(6)) as { type: string; response?: Record<string, unknown> });
    const lifecycle = events.filter((e) => e.response !== undefined);
    expect(lifecycle.map((e) => e.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.completed",
    ]);
    for (const event of lifecycle) expectOpenResponsesResource(event.response, event.type);
    expect(lifecycle[0]?.response).toMatchObject({ completed_at: null, usage: null });
  });

  it("is deterministic: the same input yields the same text", async () => {
    const a = await client.responses.create({ model: "m", input: "determinism check" });
    const b = await client.responses.create({ model: "m", input: "determinism check" });
    const c = await client.responses.create({ model: "m", input: "another input" });
    expect(a.output_text).toBe(b.output_text);
    expect(a.output_text).not.toBe(c.output_text);
    expect(a.id).not.toBe(b.id);
  });

  it("calls the shell-like tool with schema-matching arguments, then answers after the output", async () => {
    const tools = [
      {
        type: "function" as const,
        name: "read_file",
        strict: false,
        parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      },
      shellTool,
    ];
    const input: ResponseInputItem[] = [{ role: "user", content: "Run `git status --short` please" }];
    const first = await client.responses.stream({ model: "m", input, tools }).finalResponse();
    const call = first.output[0] as ResponseFunctionToolCall;
    expect(call.type).toBe("function_call");
    expect(call.name).toBe("exec_command");
    expect(call.call_id).toMatch(/^call_/);
    expect(call.id).toMatch(/^fc_/);
    expect(JSON.parse(call.arguments)).toEqual({ cmd: "git status --short", yield_time_ms: 10_000 });

    const second = await client.responses.create({
      model: "m",
      tools,
      store: false,
      input: [...input, call, { type: "function_call_output", call_id: call.call_id, output: "M README.md" }],
    });
    expect(second.output_text).toBe("Done after 1 tool call(s). Last output: M README.md");
    expect(second.usage?.input_tokens_details.cached_tokens).toBeGreaterThan(0);
  });

  it("chains stored responses by previous_response_id and rejects unknown or unstored ids", async () => {
    const first = await client.responses.create({ model: "m", input: "first turn" });
    const second = await client.responses.create({
      model: "m",
      input: "second turn",
      previous_response_id: first.id,
    });
    expect(second.previous_response_id).toBe(first.id);
    const rec = sim.recorder.list(first.id)[0];
    expect(rec?.contextItemCount).toBe(3);
    expect(rec?.inputItemCount).toBe(1);
    expect(rec?.previousResponseId).toBe(first.id);

    const unstored = await client.responses.create({ model: "m", input: "x", store: false });
    const res = await fetch(`${sim.url}/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer any" },
      body: JSON.stringify({ model: "m", input: "y", previous_response_id: unstored.id }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: {
        message: `Previous response with id '${unstored.id}' not found.`,
        type: "invalid_request_error",
        param: "previous_response_id",
        code: "previous_response_not_found",
      },
    });
  });

  it("validates tool-call pairing like OpenAI", async () => {
    const missingOutput = client.responses.create({
      model: "m",
      input: [
        { role: "user", content: "hi" },
        { type: "function_call", call_id: "call_a1", name: "exec_command", arguments: "{}" },
      ],
    });
    await expect(missingOutput).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining("No tool output found for function call call_a1."),
    });
    const orphan = client.responses.create({
      model: "m",
      input: [
        { role: "user", content: "hi" },
        { type: "function_call_output", call_id: "call_b2", output: "x" },
      ],
    });
    await expect(orphan).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining("No tool call found for function call output with call_id call_b2."),
    });
  });

  it("fail=before answers 500 with the OpenAI envelope; fail=status:429 answers 429", async () => {
    const res = await fetch(`${sim.url}/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", input: "boom [sim:fail=before]", stream: true }),
    });
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({
      error: {
        message: "Simulated upstream failure.",
        type: "server_error",
        param: null,
        code: "server_error",
      },
    });
    await expect(
      client.responses.create({ model: "m", input: "slow down [sim:fail=status:429]" }),
    ).rejects.toMatchObject({
      status: 429,
    });
    expect(sim.recorder.list("fail=before")[0]).toMatchObject({ status: 500, simulatedFailure: "before" });
  });

  it("fail=midstream sends a few events then drops the connection without a terminal event", async () => {
    const stream = client.responses.stream({ model: "m", input: "go [sim:fail=midstream] [sim:tokens=200]" });
    const types: string[] = [];
    const consume = async (): Promise<void> => {
      for await (const event of stream) types.push(event.type);
    };
    await expect(consume()).rejects.toThrow();
    expect(types.slice(0, 2)).toEqual(["response.created", "response.in_progress"]);
    expect(types.filter((t) => t === "response.output_text.delta")).toHaveLength(3);
    expect(types).not.toContain("response.completed");
    const rec = await sim.recorder.waitFor((r) => r.simulatedFailure === "midstream");
    expect(rec.aborted).toBe(false);
  });

  it("records aborted:true when the client disconnects mid-stream", async () => {
    const controller = new AbortController();
    const stream = await client.responses.create(
      { model: "m", input: "long one [sim:tokens=5000] [sim:delay_ms=0]", stream: true },
      { signal: controller.signal },
    );
    let deltas = 0;
    try {
      for await (const event of stream) {
        if (event.type === "response.output_text.delta" && ++deltas === 2) controller.abort();
      }
    } catch {
      // aborted by us
    }
    const rec = await sim.recorder.waitFor((r) => r.aborted);
    expect(rec.transport).toBe("http");
    expect(rec.body).toMatchObject({ stream: true });
    const listed = (await (await fetch(`${sim.url}/_sim/requests?contains=long%20one`)).json()) as {
      data: Array<{ aborted: boolean; rawText?: string }>;
    };
    expect(listed.data).toHaveLength(1);
    expect(listed.data[0]?.aborted).toBe(true);
    expect(listed.data[0]?.rawText).toBeUndefined();
  });

  it("honours delay_ms and max_output_tokens (incomplete)", async () => {
    const t0 = Date.now();
    const slow = await client.responses.create({ model: "m", input: "wait [sim:delay_ms=150]" });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(150);
    expect(slow.status).toBe("completed");
    const cut = await client.responses
      .stream({ model: "m", input: "long [sim:tokens=100]", max_output_tokens: 16 })
      .finalResponse();
    expect(cut.status).toBe("incomplete");
    expect(cut.incomplete_details?.reason).toBe("max_output_tokens");
    expect(cut.usage?.output_tokens).toBe(16);
  });

  it("holds a response before its terminal event until the hold is released (hold=NAME)", async () => {
    const stream = client.responses.stream({ model: "m", input: "held [sim:hold=h1] [sim:tokens=10]" });
    const types: string[] = [];
    const reading = (async () => {
      for await (const event of stream) types.push(event.type);
    })();
    await expect.poll(() => types.at(-1)).toBe("response.output_item.done");
    // Everything but the terminal event has arrived; the terminal one waits for the release.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(types.at(-1)).toBe("response.output_item.done");
    const res = await fetch(`${sim.url}/_sim/release?hold=h1`, { method: "POST" });
    expect(await res.json()).toEqual({ released: "h1" });
    await reading;
    expect(types.at(-1)).toBe("response.completed");
    // A released hold no longer holds (a JSON response this time).
    expect((await client.responses.create({ model: "m", input: "again [sim:hold=h1]" })).status).toBe(
      "completed",
    );
  });

  it("serves /v1/models as a simulator and clears recorded requests", async () => {
    const models = await client.models.list();
    expect(models.data).toEqual([
      expect.objectContaining({ id: "deltagate-sim", owned_by: "deltagate-simulator" }),
    ]);
    await client.responses.create({ model: "m", input: "record me" });
    expect(sim.recorder.list("record me")).toHaveLength(1);
    const del = await fetch(`${sim.url}/_sim/requests`, { method: "DELETE" });
    expect(del.status).toBe(200);
    expect(sim.recorder.list()).toHaveLength(0);
  });
});
