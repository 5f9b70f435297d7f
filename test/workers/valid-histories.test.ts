/**
 * Valid histories always (issue #11 item 3), against the strict reference simulator: whatever
 * the client sent and whatever happened before (a failure or cancel mid-stream, a deleted
 * response), the context Deltagate sends upstream passes OpenAI's rules and the strictest
 * provider's (outputs in their call's tool group, reasoning followed by its item); a request
 * OpenAI would refuse is refused with OpenAI's error before any upstream call.
 */

import OpenAI from "openai";
import type { ResponseFunctionToolCall, ResponseInputItem } from "openai/resources/responses/responses";
import { describe, expect, inject, it } from "vitest";
import { SHELL_TOOL } from "../support/fixtures.ts";
import { sdkClient } from "../support/sdk-client.ts";
import { testId } from "../support/test-id.ts";
import { simulatorRequests } from "../support/ws-client.ts";

const MODEL = "deltagate-sim";
const tools = [{ ...SHELL_TOOL, type: "function" as const, strict: false }];

/** The `input` items of the upstream requests whose body contains `marker`, oldest first. */
async function upstreamInputs(marker: string): Promise<Array<Array<Record<string, unknown>>>> {
  const records = await simulatorRequests(inject("simulatorUrl"), marker);
  return records.map((r) => {
    const body = r.body as { input?: unknown; messages?: unknown };
    return (body.input ?? body.messages ?? []) as Array<Record<string, unknown>>;
  });
}

function types(items: Array<Record<string, unknown>>): string[] {
  return items.map((item) => String(item.type ?? item.role));
}

function calls(response: OpenAI.Responses.Response): ResponseFunctionToolCall[] {
  return response.output.filter((item): item is ResponseFunctionToolCall => item.type === "function_call");
}

/**
 * Streams a create and returns the terminal Response (a non-streaming create answers a failed
 * response with an HTTP error, which hides its id and output).
 */
async function streamed(
  client: OpenAI,
  params: Omit<OpenAI.Responses.ResponseCreateParamsStreaming, "stream">,
): Promise<OpenAI.Responses.Response> {
  const stream = await client.responses.create({ ...params, stream: true });
  let final: OpenAI.Responses.Response | null = null;
  for await (const event of stream) {
    if (event.type === "response.completed" || event.type === "response.failed") final = event.response;
  }
  if (!final) throw new Error("no terminal event");
  return final;
}

/** Index of the item (Responses) or message (Chat) carrying the call `callId`, or -1. */
function callIndex(items: Array<Record<string, unknown>>, callId: string): number {
  return items.findIndex(
    (item) =>
      (item.type === "function_call" && item.call_id === callId) ||
      (Array.isArray(item.tool_calls) &&
        item.tool_calls.some((call: { id?: unknown }) => call.id === callId)),
  );
}

/** Index of the output (Responses) or tool message (Chat) answering `callId`, or -1. */
function outputIndex(items: Array<Record<string, unknown>>, callId: string): number {
  return items.findIndex(
    (item) =>
      (item.type === "function_call_output" && item.call_id === callId) ||
      (item.role === "tool" && item.tool_call_id === callId),
  );
}

/** The status and OpenAI error body of a rejected call. */
async function rejection(call: Promise<unknown>): Promise<{ status: number | undefined; error: unknown }> {
  try {
    await call;
  } catch (err) {
    if (err instanceof OpenAI.APIError) return { status: err.status, error: err.error };
    throw err;
  }
  throw new Error("the request was accepted");
}

describe("tool outputs reach the upstream next to their calls", () => {
  // OpenAI pairs by call_id wherever the output sits, so Deltagate accepts this order; strict
  // providers do not, so the upstream gets the output moved next to its call.
  for (const model of [MODEL, "sim-ws-adjacent", "sim-chat-adjacent"]) {
    it(`${model}: an output sent after a new user message`, async () => {
      const client = sdkClient();
      const marker = `adjacent-${model}-${testId()}`;
      const first = await client.responses.create({
        model,
        tools,
        input: `${marker} run \`ls\` [sim:tools=1]`,
      });
      const [call] = calls(first);
      expect(call).toBeDefined();
      const second = await client.responses.create({
        model,
        tools,
        previous_response_id: first.id,
        input: [
          { role: "user", content: `${marker} meanwhile, note this [sim:tools=0]` },
          { type: "function_call_output", call_id: call!.call_id, output: "file-a" },
        ],
      });
      expect(second.status).toBe("completed");
      // A WebSocket upstream gets the delta on top of its own state, which ends with the call.
      const sent = (await upstreamInputs(marker)).at(-1) ?? [];
      expect(outputIndex(sent, call!.call_id)).toBe(callIndex(sent, call!.call_id) + 1);
    });
  }

  it("a stateless input with the output after a later user message", async () => {
    const client = sdkClient();
    const marker = `adjacent-stateless-${testId()}`;
    const response = await client.responses.create({
      model: MODEL,
      tools,
      input: [
        { role: "user", content: `${marker} start` },
        { type: "function_call", call_id: "call_s1", name: "exec_command", arguments: '{"cmd":"ls"}' },
        { role: "user", content: `${marker} note [sim:tools=0]` },
        { type: "function_call_output", call_id: "call_s1", output: "ok" },
      ],
    });
    expect(response.status).toBe("completed");
    const sent = (await upstreamInputs(marker)).at(-1) ?? [];
    expect(types(sent)).toEqual(["message", "function_call", "function_call_output", "message"]);
  });
});

describe("items of interrupted responses are completed or dropped", () => {
  it("keeps what the client saw of a response failed mid-stream: its reasoning and the cut message", async () => {
    const client = sdkClient();
    const marker = `rs-failed-${testId()}`;
    const failed = await streamed(client, {
      model: MODEL,
      input: `${marker} think [sim:reasoning=1] [sim:tokens=200] [sim:fail=midstream]`,
    });
    expect(failed.status).toBe("failed");
    // The cut message is stored `incomplete` with the text the client read (partial-output.ts),
    // so the reasoning keeps its following item and both go upstream on the next turn.
    expect(failed.output.map((item) => [item.type, (item as { status?: string }).status])).toEqual([
      ["reasoning", undefined],
      ["message", "incomplete"],
    ]);
    const next = await client.responses.create({
      model: MODEL,
      previous_response_id: failed.id,
      input: `${marker} try again`,
    });
    expect(next.status).toBe("completed");
    expect(types((await upstreamInputs(marker)).at(-1) ?? [])).toEqual([
      "message",
      "reasoning",
      "message",
      "message",
    ]);
  });

  it("keeps what the client saw of a cancelled response: its reasoning and the cut message", async () => {
    const client = sdkClient();
    const marker = `rs-cancel-${testId()}`;
    const stream = await client.responses.create({
      model: MODEL,
      input: `${marker} think long [sim:reasoning=1] [sim:tokens=5000]`,
      stream: true,
    });
    let id = "";
    for await (const event of stream) {
      if (event.type === "response.created") id = event.response.id;
      if (event.type === "response.output_text.delta") break;
    }
    const cancelled = await client.responses.cancel(id);
    expect(cancelled.status).toBe("cancelled");
    expect(cancelled.output.map((item) => [item.type, (item as { status?: string }).status])).toEqual([
      ["reasoning", undefined],
      ["message", "incomplete"],
    ]);
    const next = await client.responses.create({
      model: MODEL,
      previous_response_id: id,
      input: `${marker} shorter please`,
    });
    expect(next.status).toBe("completed");
    expect(types((await upstreamInputs(marker)).at(-1) ?? [])).toEqual([
      "message",
      "reasoning",
      "message",
      "message",
    ]);
  });

  it("drops function calls a failed response left unanswered, and keeps them once answered", async () => {
    const client = sdkClient();
    const marker = `fc-failed-${testId()}`;
    const failed = await streamed(client, {
      model: MODEL,
      tools,
      input: `${marker} run \`ls\` [sim:tools=1] [sim:parallel=2] [sim:fail=midstream]`,
    });
    expect(failed.status).toBe("failed");
    const made = calls(failed);
    expect(made.length).toBeGreaterThan(0);
    const moveOn = await client.responses.create({
      model: MODEL,
      tools,
      previous_response_id: failed.id,
      input: `${marker} never mind [sim:tools=0]`,
    });
    expect(moveOn.status).toBe("completed");
    expect(types((await upstreamInputs(marker)).at(-1) ?? [])).toEqual(["message", "message"]);

    const answered = await client.responses.create({
      model: MODEL,
      tools,
      previous_response_id: failed.id,
      input: [
        ...made.map((call) => ({
          type: "function_call_output" as const,
          call_id: call.call_id,
          output: "ok",
        })),
        // A new user message, so the failing directive of the first one no longer applies.
        { role: "user" as const, content: `${marker} go on [sim:tools=0]` },
      ],
    });
    expect(answered.status).toBe("completed");
    const sent = types((await upstreamInputs(marker)).at(-1) ?? []);
    expect(sent.filter((t) => t === "function_call")).toHaveLength(made.length);
    expect(sent.filter((t) => t === "function_call_output")).toHaveLength(made.length);
  });

  it("still rejects, like OpenAI, a completed response's call left unanswered", async () => {
    const client = sdkClient();
    const marker = `fc-completed-${testId()}`;
    const first = await client.responses.create({ model: MODEL, tools, input: `${marker} run \`ls\`` });
    const [call] = calls(first);
    const next = client.responses.create({
      model: MODEL,
      tools,
      previous_response_id: first.id,
      input: `${marker} something else`,
    });
    expect(await rejection(next)).toEqual({
      status: 400,
      error: {
        message: `No tool output found for function call ${call!.call_id}.`,
        type: "invalid_request_error",
        param: "input",
        code: null,
      },
    });
  });
});

describe("deleted responses leave a valid history", () => {
  /** R1 calls a tool, R2 answers it, R3 follows; returns the three responses. */
  async function chain(client: OpenAI, marker: string) {
    const r1 = await client.responses.create({ model: MODEL, tools, input: `${marker} run \`ls\`` });
    const [call] = calls(r1);
    const r2 = await client.responses.create({
      model: MODEL,
      tools,
      previous_response_id: r1.id,
      input: [{ type: "function_call_output", call_id: call!.call_id, output: "file-a" }],
    });
    const r3 = await client.responses.create({
      model: MODEL,
      tools,
      previous_response_id: r2.id,
      input: `${marker} thanks [sim:tools=0]`,
    });
    return { r1, r2, r3 };
  }

  it("deleting the response that answered a call drops the call from later contexts", async () => {
    const client = sdkClient();
    const marker = `delete-answer-${testId()}`;
    const { r2, r3 } = await chain(client, marker);
    await client.responses.delete(r2.id);
    const next = await client.responses.create({
      model: MODEL,
      tools,
      previous_response_id: r3.id,
      input: `${marker} and now? [sim:tools=0]`,
    });
    expect(next.status).toBe("completed");
    const sent = types((await upstreamInputs(marker)).at(-1) ?? []);
    expect(sent).not.toContain("function_call");
    expect(sent).not.toContain("function_call_output");
  });

  it("deleting the response that made a call drops its output from later contexts", async () => {
    const client = sdkClient();
    const marker = `delete-call-${testId()}`;
    const { r1, r3 } = await chain(client, marker);
    await client.responses.delete(r1.id);
    const next = await client.responses.create({
      model: MODEL,
      tools,
      previous_response_id: r3.id,
      input: `${marker} and now? [sim:tools=0]`,
    });
    expect(next.status).toBe("completed");
    const sent = types((await upstreamInputs(marker)).at(-1) ?? []);
    expect(sent).not.toContain("function_call_output");
  });
});

describe("requests OpenAI refuses are refused before any upstream call", () => {
  it("an empty input without previous_response_id", async () => {
    const client = sdkClient();
    const marker = `empty-${testId()}`;
    expect(
      await rejection(client.responses.create({ model: MODEL, instructions: marker, input: [] })),
    ).toEqual({
      status: 400,
      error: {
        message:
          "Invalid 'input': empty array. Expected an array with minimum length 1, but got an empty array instead.",
        type: "invalid_request_error",
        param: "input",
        code: "empty_array",
      },
    });
    expect(await upstreamInputs(marker)).toEqual([]);
  });

  it("max_output_tokens below 16", async () => {
    const client = sdkClient();
    const marker = `max-${testId()}`;
    const request = client.responses.create({ model: MODEL, input: marker, max_output_tokens: 10 });
    expect(await rejection(request)).toEqual({
      status: 400,
      error: {
        message:
          "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 10 instead.",
        type: "invalid_request_error",
        param: "max_output_tokens",
        code: "integer_below_min_value",
      },
    });
    expect(await upstreamInputs(marker)).toEqual([]);
  });

  it("a reasoning item without the item that must follow it", async () => {
    const client = sdkClient();
    const marker = `rs-input-${testId()}`;
    const input = [
      { role: "user", content: marker },
      { type: "reasoning", id: "rs_client1", summary: [] },
      { role: "user", content: "go on" },
    ] as ResponseInputItem[];
    expect(await rejection(client.responses.create({ model: MODEL, input }))).toEqual({
      status: 400,
      error: {
        message: "Item 'rs_client1' of type 'reasoning' was provided without its required following item.",
        type: "invalid_request_error",
        param: "input",
        code: null,
      },
    });
    expect(await upstreamInputs(marker)).toEqual([]);
  });

  it("a custom tool call without its output", async () => {
    const client = sdkClient();
    const marker = `custom-${testId()}`;
    const input = [
      { role: "user", content: marker },
      { type: "custom_tool_call", call_id: "call_k1", name: "apply_patch", input: "*** Begin Patch" },
      { role: "user", content: "go on" },
    ] as ResponseInputItem[];
    expect(await rejection(client.responses.create({ model: MODEL, input }))).toEqual({
      status: 400,
      error: {
        message: "No tool output found for custom tool call call_k1.",
        type: "invalid_request_error",
        param: "input",
        code: null,
      },
    });
    expect(await upstreamInputs(marker)).toEqual([]);
  });
});
