/**
 * The reference simulator validates `POST /v1/responses` like OpenAI (strict by default), driven
 * by the real openai-node client: each invalid request class is answered with OpenAI's error
 * (status, type, code, param, message) and the valid variants next to it pass. Covers input
 * presence and item shape, tool-call pairing and tool-group adjacency, reasoning items (their
 * following item, `encrypted_content` under `store: false`, look-up by id), and the lenient mode.
 */
import OpenAI, { APIError } from "openai";
import type {
  ResponseInputItem,
  ResponseOutputMessage,
  ResponseReasoningItem,
} from "openai/resources/responses/responses";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningSimulator, startSimulator } from "../../simulator/server.ts";
import { WsTestSession } from "../../simulator/ws-test-client.ts";

let sim: RunningSimulator;
let client: OpenAI;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, quiet: true, decodeTokensPerSecond: 20_000 });
  client = new OpenAI({ apiKey: "sim-key", baseURL: `${sim.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await sim.close();
});

/** The status and OpenAI error body a rejected call carried. */
async function rejection(call: Promise<unknown>): Promise<{ status: number | undefined; error: unknown }> {
  try {
    await call;
  } catch (err) {
    if (err instanceof APIError) return { status: err.status, error: err.error };
    throw err;
  }
  throw new Error("the request was accepted");
}

function invalid(message: string, param: string | null = "input", code: string | null = null) {
  return { status: 400, error: { message, type: "invalid_request_error", param, code } };
}

const user = (text: string): ResponseInputItem => ({ role: "user", content: text });
const call = (callId: string): ResponseInputItem => ({
  type: "function_call",
  call_id: callId,
  name: "exec_command",
  arguments: "{}",
});
const output = (callId: string): ResponseInputItem => ({
  type: "function_call_output",
  call_id: callId,
  output: "ok",
});

describe("strict simulator: input presence and item shape", () => {
  it("rejects an empty or missing input without previous_response_id, even with instructions", async () => {
    expect(await rejection(client.responses.create({ model: "m", instructions: "hi", input: [] }))).toEqual(
      invalid(
        "Invalid 'input': empty array. Expected an array with minimum length 1, but got an empty array instead.",
        "input",
        "empty_array",
      ),
    );
    expect(await rejection(client.responses.create({ model: "m", instructions: "hi" }))).toEqual(
      invalid("Missing required parameter: 'input'.", "input", "missing_required_parameter"),
    );
    const first = await client.responses.create({ model: "m", input: "start" });
    const next = await client.responses.create({ model: "m", input: [], previous_response_id: first.id });
    expect(next.status).toBe("completed");
  });

  it("rejects max_output_tokens below 16", async () => {
    expect(
      await rejection(client.responses.create({ model: "m", input: "x", max_output_tokens: 10 })),
    ).toEqual(
      invalid(
        "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 10 instead.",
        "max_output_tokens",
        "integer_below_min_value",
      ),
    );
    const ok = await client.responses.create({ model: "m", input: "x", max_output_tokens: 16 });
    expect(ok.status).not.toBe("failed");
  });

  it("accepts an input-less generate:false warm-up over WebSocket", async () => {
    const ws = new WsTestSession(sim.url);
    const warm = await ws.turn({ model: "m", store: false, generate: false, instructions: "prepare" });
    expect(warm.response?.status).toBe("completed");
    const empty = await ws.turn({ model: "m", store: false, input: [] });
    expect(empty.error).toMatchObject({ status: 400, error: { code: "empty_array", param: "input" } });
    await ws.close();
  });

  it("rejects input_text in an assistant message and items missing required fields", async () => {
    const assistant = client.responses.create({
      model: "m",
      input: [
        user("hi"),
        { type: "message", role: "assistant", content: [{ type: "input_text", text: "hello" }] },
        user("again"),
      ] as ResponseInputItem[],
    });
    expect(await rejection(assistant)).toEqual(
      invalid(
        "Invalid value: 'input_text'. Supported values are: 'output_text' and 'refusal'.",
        "input[1].content[0]",
        "invalid_value",
      ),
    );
    const noCallId = client.responses.create({
      model: "m",
      input: [
        user("hi"),
        { type: "function_call", name: "exec_command", arguments: "{}" },
      ] as ResponseInputItem[],
    });
    expect(await rejection(noCallId)).toEqual(
      invalid(
        "Missing required parameter: 'input[1].call_id'.",
        "input[1].call_id",
        "missing_required_parameter",
      ),
    );
    const fine = await client.responses.create({
      model: "m",
      input: [
        user("hi"),
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "hello" }] },
        user("again"),
      ] as ResponseInputItem[],
    });
    expect(fine.status).toBe("completed");
  });
});

describe("strict simulator: tool-call pairing", () => {
  it("rejects an output without its call, and a call left unanswered before the next user message", async () => {
    expect(
      await rejection(client.responses.create({ model: "m", input: [user("hi"), output("call_o1")] })),
    ).toEqual(invalid("No tool call found for function call output with call_id call_o1."));
    const unanswered = client.responses.create({
      model: "m",
      input: [user("hi"), call("call_u1"), user("next")],
    });
    expect(await rejection(unanswered)).toEqual(invalid("No tool output found for function call call_u1."));
    const custom = client.responses.create({
      model: "m",
      input: [user("hi"), { type: "custom_tool_call", call_id: "call_c1", name: "apply_patch", input: "x" }],
    });
    expect(await rejection(custom)).toEqual(invalid("No tool output found for custom tool call call_c1."));
  });

  it("rejects an output separated from its call's tool group (a user message in between)", async () => {
    const apart = client.responses.create({
      model: "m",
      input: [user("hi"), call("call_a1"), user("meanwhile"), output("call_a1")],
    });
    expect(await rejection(apart)).toEqual(invalid("No tool output found for function call call_a1."));
  });

  it("accepts outputs anywhere inside the tool group, in any order", async () => {
    for (const input of [
      [user("hi"), call("call_g1"), call("call_g2"), output("call_g2"), output("call_g1")],
      [user("hi"), call("call_g3"), output("call_g3"), call("call_g4"), output("call_g4"), user("more")],
    ]) {
      const ok = await client.responses.create({ model: "m", input });
      expect(ok.status).toBe("completed");
    }
  });

  it("in lenient mode (strict:false) pairs by call_id only, as OpenAI itself does", async () => {
    const lenient = await startSimulator({ port: 0, quiet: true, strict: false });
    const lenientClient = new OpenAI({ apiKey: "k", baseURL: `${lenient.url}/v1`, maxRetries: 0 });
    const apart = await lenientClient.responses.create({
      model: "m",
      input: [user("hi"), call("call_l1"), user("meanwhile"), output("call_l1")],
    });
    expect(apart.status).toBe("completed");
    await lenient.close();
  });
});

describe("strict simulator: reasoning items", () => {
  /** A reasoning turn; returns its request input and output (reasoning, then the message). */
  async function reasoningTurn(options: { store: boolean; include: boolean }) {
    const input = [user("think first [sim:reasoning=1] [sim:tokens=5]")];
    const response = await client.responses.create({
      model: "m",
      input,
      store: options.store,
      ...(options.include ? { include: ["reasoning.encrypted_content" as const] } : {}),
    });
    const [reasoning, message] = response.output as [ResponseReasoningItem, ResponseOutputMessage];
    return { input, reasoning, message, response };
  }

  const replay = (reasoning: ResponseReasoningItem, message: ResponseOutputMessage) =>
    [reasoning, message] as unknown as ResponseInputItem[];

  it("returns encrypted_content only when include asks for it; the SDK accumulates the stream", async () => {
    const plain = await reasoningTurn({ store: false, include: false });
    expect(plain.reasoning).toMatchObject({ type: "reasoning", summary: [] });
    expect(plain.reasoning.encrypted_content).toBeUndefined();
    expect(plain.response.usage?.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
    const stream = client.responses.stream({
      model: "m",
      store: false,
      include: ["reasoning.encrypted_content"],
      input: "streamed [sim:reasoning=1]",
    });
    const final = await stream.finalResponse();
    expect(final.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    expect((final.output[0] as ResponseReasoningItem).encrypted_content).toMatch(/^gAAAAA/);
  });

  it("store:false: replays with encrypted_content byte-exact pass; tampered content fails verification", async () => {
    const { input, reasoning, message } = await reasoningTurn({ store: false, include: true });
    const ok = await client.responses.create({
      model: "m",
      store: false,
      input: [...input, ...replay(reasoning, message), user("go on")],
    });
    expect(ok.status).toBe("completed");
    const tampered = { ...reasoning, encrypted_content: `${reasoning.encrypted_content}x` };
    const bad = client.responses.create({
      model: "m",
      store: false,
      input: [...input, ...replay(tampered, message), user("go on")],
    });
    const shown = `${tampered.encrypted_content?.slice(0, 4)}...${tampered.encrypted_content?.slice(-4)}`;
    expect(await rejection(bad)).toEqual(
      invalid(`The encrypted content ${shown} could not be verified.`, null, "invalid_encrypted_content"),
    );
  });

  it("store:false: a reasoning item sent by id only is not found (404)", async () => {
    const { input, reasoning, message } = await reasoningTurn({ store: false, include: false });
    const byId = client.responses.create({
      model: "m",
      store: false,
      input: [...input, ...replay(reasoning, message), user("go on")],
    });
    expect(await rejection(byId)).toEqual({
      status: 404,
      error: {
        message: `Item with id '${reasoning.id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`,
        type: "invalid_request_error",
        param: "input",
        code: null,
      },
    });
  });

  it("store:true: a reasoning item resolves by id", async () => {
    const { input, reasoning, message } = await reasoningTurn({ store: true, include: false });
    const ok = await client.responses.create({
      model: "m",
      input: [...input, ...replay(reasoning, message), user("go on")],
    });
    expect(ok.status).toBe("completed");
  });

  it("rejects a reasoning item without its following item: last, or before a user message", async () => {
    const { input, reasoning } = await reasoningTurn({ store: false, include: true });
    const missing = invalid(
      `Item '${reasoning.id}' of type 'reasoning' was provided without its required following item.`,
    );
    for (const rest of [[reasoning], [reasoning, user("go on")]] as unknown as ResponseInputItem[][]) {
      const request = client.responses.create({ model: "m", store: false, input: [...input, ...rest] });
      expect(await rejection(request)).toEqual(missing);
    }
  });

  it("a reasoning item resolved by id needs its following item with its id", async () => {
    const { input, reasoning, message } = await reasoningTurn({ store: true, include: false });
    const { id: _id, ...withoutId } = message;
    const request = client.responses.create({
      model: "m",
      input: [...input, reasoning, withoutId, user("go on")] as unknown as ResponseInputItem[],
    });
    expect(await rejection(request)).toEqual(
      invalid(`Item '${reasoning.id}' of type 'reasoning' was provided without its required following item.`),
    );
  });

  it("a reasoning item carrying encrypted_content may be followed by an id-less item", async () => {
    const { input, reasoning, message } = await reasoningTurn({ store: false, include: true });
    const { id: _id, ...withoutId } = message;
    const ok = await client.responses.create({
      model: "m",
      store: false,
      input: [...input, reasoning, withoutId, user("go on")] as unknown as ResponseInputItem[],
    });
    expect(ok.status).toBe("completed");
  });

  it("encrypted_content is bound to its item's id: under another id it fails verification, without one it passes", async () => {
    const { input, reasoning, message } = await reasoningTurn({ store: false, include: true });
    const renamed = { ...reasoning, id: "rs_made_up" };
    const bad = client.responses.create({
      model: "m",
      store: false,
      input: [...input, ...replay(renamed, message), user("go on")],
    });
    expect(await rejection(bad)).toEqual(
      invalid(
        "The encrypted content for item rs_made_up could not be verified. Reason: Encrypted content item_id did not match the target item id.",
        null,
        "invalid_encrypted_content",
      ),
    );
    const { id: _rid, ...anonymous } = reasoning;
    const { id: _mid, ...plainMessage } = message;
    const ok = await client.responses.create({
      model: "m",
      store: false,
      input: [...input, anonymous, plainMessage, user("go on")] as unknown as ResponseInputItem[],
    });
    expect(ok.status).toBe("completed");
  });

  it("a model that does not reason refuses include reasoning.encrypted_content and emits no reasoning", async () => {
    for (const model of ["gpt-4o-mini", "openai/gpt-4.1", "gpt-5-chat-latest"]) {
      const refused = client.responses.create({
        model,
        store: false,
        include: ["reasoning.encrypted_content"],
        input: "hi [sim:reasoning=1]",
      });
      expect(await rejection(refused)).toEqual(
        invalid("Encrypted content is not supported with this model.", "include"),
      );
      const plain = await client.responses.create({ model, store: false, input: "hi [sim:reasoning=1]" });
      expect(plain.output.map((item) => item.type)).toEqual(["message"]);
    }
  });

  it("rejects an issued item sent without the reasoning item that preceded it", async () => {
    const { input, reasoning, message } = await reasoningTurn({ store: false, include: true });
    const orphan = client.responses.create({
      model: "m",
      store: false,
      input: [...input, message, user("go on")] as ResponseInputItem[],
    });
    expect(await rejection(orphan)).toEqual(
      invalid(
        `Item '${message.id}' of type 'message' was provided without its required 'reasoning' item: '${reasoning.id}'.`,
      ),
    );
  });
});
