/**
 * What a chain of stored responses means after the fact: `GET /v1/responses/{id}/input_items`
 * lists every item the response was generated from (the whole chain's items, as OpenAI lists
 * them), and deleting a response keeps its children continuable — a child becomes the root of
 * its chain, and a `function_call_output` whose `function_call` was deleted with its ancestor is
 * left out of the context sent upstream (a strict upstream refuses an output without its call).
 */
import { describe, expect, inject, it } from "vitest";
import { SHELL_TOOL } from "../support/fixtures.ts";
import { sdkClient } from "../support/sdk-client.ts";
import { testId } from "../support/test-id.ts";
import { simulatorRequests } from "../support/ws-client.ts";

const MODEL = "deltagate-sim";
const tools = [{ ...SHELL_TOOL, type: "function" as const, strict: false }];

describe("chain semantics", () => {
  it("lists the whole chain's items as a chained response's input items", async () => {
    const client = sdkClient();
    const first = await client.responses.create({ model: MODEL, input: "first [sim:tokens=5]" });
    const second = await client.responses.create({
      model: MODEL,
      previous_response_id: first.id,
      input: "second [sim:tokens=5]",
    });
    const asc = await client.responses.inputItems.list(second.id, { order: "asc" });
    const expected = [
      ...(await client.responses.inputItems.list(first.id, { order: "asc" })).data.map((item) => item.id),
      ...first.output.map((item) => item.id),
    ];
    expect(asc.data.map((item) => item.id).slice(0, expected.length)).toEqual(expected);
    expect(asc.data).toHaveLength(expected.length + 1);
    expect(asc.data.at(-1)).toMatchObject({
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: "second [sim:tokens=5]" }],
    });
    // Newest first by default; cursors page through the chain.
    const desc = await client.responses.inputItems.list(second.id, { limit: 1 });
    expect(desc.data[0]?.id).toBe(asc.data.at(-1)?.id);
    expect(desc.has_more).toBe(true);
  });

  it("keeps a child continuable after deleting the ancestor that held its function_call", async () => {
    const client = sdkClient();
    const marker = `delete-call-${testId()}`;
    const withCall = await client.responses.create({
      model: MODEL,
      tools,
      safety_identifier: marker,
      input: "run `pwd` [sim:tools=1]",
    });
    const call = withCall.output.find((item) => item.type === "function_call") as { call_id: string };
    const child = await client.responses.create({
      model: MODEL,
      tools,
      safety_identifier: marker,
      previous_response_id: withCall.id,
      input: [{ type: "function_call_output", call_id: call.call_id, output: "/tmp" }],
    });
    expect(child.status).toBe("completed");
    await client.responses.delete(withCall.id);

    const grandchild = await client.responses.create({
      model: MODEL,
      tools,
      safety_identifier: marker,
      previous_response_id: child.id,
      input: "thanks [sim:tokens=5]",
    });
    expect(grandchild.status).toBe("completed");
    // The child is now the root of its chain.
    expect((await client.responses.retrieve(child.id)).previous_response_id).toBeNull();
    const sent = (await simulatorRequests(inject("simulatorUrl"), marker)).at(-1)?.body as {
      input: Array<{ type?: string; call_id?: string }>;
    };
    expect(sent.input.some((item) => item.call_id === call.call_id)).toBe(false);
    expect(sent.input.at(-1)).toMatchObject({ role: "user" });
  });

  it("still rejects a client's own function_call_output without its call, as OpenAI does", async () => {
    const error = await sdkClient()
      .responses.create({
        model: MODEL,
        input: [{ type: "function_call_output", call_id: "call_nowhere", output: "x" }],
      })
      .catch((e: unknown) => e as { status?: number; code?: unknown; param?: unknown });
    // OpenAI's own answer: code null (simulator/pairing.ts cites the public reports).
    expect(error).toMatchObject({
      status: 400,
      param: "input",
      code: null,
      message: expect.stringContaining(
        "No tool call found for function call output with call_id call_nowhere.",
      ),
    });
  });
});
