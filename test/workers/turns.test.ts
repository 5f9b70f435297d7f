/**
 * Turns over the WebSocket (issue #2 §3–5): a streamed turn through the simulator, a tool loop
 * chained with previous_response_id sending only new items, generate:false warm-ups, forks,
 * and tool-pairing errors. Every response's events pass the `openai` SDK's accumulator with
 * contiguous sequence numbers. Who may continue a store:false response: store-false-grace.test.ts.
 */
import { describe, expect, inject, it } from "vitest";
import { SHELL_TOOL } from "../support/fixtures.ts";
import { testId } from "../support/test-id.ts";
import {
  connect,
  type Frame,
  outputText,
  simulatorRequests,
  uniqueSession,
  validateWithSdk,
} from "../support/ws-client.ts";

const MODEL = "deltagate-sim";

function responseOf(frames: Frame[]): { id: string; status: string; output: Array<Record<string, unknown>> } {
  return (
    frames.at(-1) as unknown as {
      response: { id: string; status: string; output: Array<Record<string, unknown>> };
    }
  ).response;
}

describe("turns", () => {
  it("streams a text turn whose events pass the openai SDK accumulator", async () => {
    const ws = await connect({ session: uniqueSession("text") });
    ws.send({ type: "response.create", model: MODEL, input: "Say something [sim:tokens=30]", stream: true });
    const frames = await ws.turn(0);
    expect(frames[0]?.type).toBe("response.created");
    expect(frames[1]?.type).toBe("response.in_progress");
    expect(frames.at(-1)?.type).toBe("response.completed");
    const final = await validateWithSdk(frames);
    expect(final.id).toMatch(/^resp_/);
    expect(final.output_text.length).toBeGreaterThan(0);
    expect(final.output_text).toBe(outputText(frames));
    expect(final.usage?.output_tokens).toBeGreaterThan(0);
    // Deltagate's own ids, not the upstream's.
    const created = frames[0] as unknown as { response: { id: string } };
    expect(created.response.id).toBe(final.id);
    ws.close();
  });

  it("runs a tool loop, each turn sending only the new items, with the full context reaching upstream", async () => {
    const simulatorUrl = inject("simulatorUrl");
    const marker = `loop-${testId()}`;
    const ws = await connect({ session: uniqueSession("loop") });
    ws.send({
      type: "response.create",
      model: MODEL,
      store: false,
      tools: [SHELL_TOOL],
      input: `${marker}: list files with \`ls\` [sim:tools=3]`,
    });
    let previous = responseOf(await ws.turn(0));
    for (let turn = 1; turn <= 3; turn++) {
      const call = previous.output.find((item) => item.type === "function_call");
      expect(call, `turn ${turn}`).toBeDefined();
      expect(JSON.parse(String(call!.arguments))).toMatchObject({ cmd: "ls" });
      ws.send({
        type: "response.create",
        model: MODEL,
        store: false,
        tools: [SHELL_TOOL],
        previous_response_id: previous.id,
        input: [{ type: "function_call_output", call_id: call!.call_id, output: `output ${turn}` }],
      });
      const frames = await ws.turn(turn);
      await validateWithSdk(frames);
      previous = responseOf(frames);
    }
    expect(previous.output.some((item) => item.type === "message")).toBe(true);
    const recorded = await simulatorRequests(simulatorUrl, marker);
    // Turn k's upstream request carries the whole context: 1 user message + 2 items per tool round.
    expect(recorded.map((r) => r.contextItemCount)).toEqual([1, 3, 5, 7]);
    ws.close();
  });

  it("returns a chainable response with empty output and no upstream call for generate:false", async () => {
    const simulatorUrl = inject("simulatorUrl");
    const marker = `warm-${testId()}`;
    const ws = await connect({ session: uniqueSession("warm") });
    ws.send({
      type: "response.create",
      model: MODEL,
      store: false,
      generate: false,
      input: `${marker} base instructions`,
    });
    const warm = await ws.turn(0);
    expect(warm.map((f) => f.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.completed",
    ]);
    await validateWithSdk(warm);
    expect(responseOf(warm).output).toEqual([]);
    expect(await simulatorRequests(simulatorUrl, marker)).toHaveLength(0);
    ws.send({
      type: "response.create",
      model: MODEL,
      store: false,
      previous_response_id: responseOf(warm).id,
      input: "go",
    });
    const next = await ws.turn(1);
    expect(next.at(-1)?.type).toBe("response.completed");
    const recorded = await simulatorRequests(simulatorUrl, marker);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]?.contextItemCount).toBe(2);
    ws.close();
  });

  it("forks: two continuations of the same parent each see the parent's history only", async () => {
    const simulatorUrl = inject("simulatorUrl");
    const marker = `fork-${testId()}`;
    const ws = await connect({ session: uniqueSession("fork") });
    ws.send({ type: "response.create", model: MODEL, input: `${marker} root` });
    const root = responseOf(await ws.turn(0));
    ws.send({ type: "response.create", model: MODEL, previous_response_id: root.id, input: "branch A" });
    const a = responseOf(await ws.turn(1));
    ws.send({ type: "response.create", model: MODEL, previous_response_id: root.id, input: "branch B" });
    await ws.turn(2);
    ws.send({ type: "response.create", model: MODEL, previous_response_id: a.id, input: "A again" });
    await ws.turn(3);
    const recorded = await simulatorRequests(simulatorUrl, marker);
    expect(recorded.map((r) => r.contextItemCount)).toEqual([1, 3, 3, 5]);
    const branchB = JSON.stringify(recorded[2]?.body);
    expect(branchB).toContain("branch B");
    expect(branchB).not.toContain("branch A");
    ws.close();
  });

  it("never inherits instructions through previous_response_id", async () => {
    const simulatorUrl = inject("simulatorUrl");
    const marker = `instr-${testId()}`;
    const ws = await connect({ session: uniqueSession("instr") });
    ws.send({ type: "response.create", model: MODEL, instructions: "SECRET-STYLE", input: `${marker} one` });
    const first = responseOf(await ws.turn(0));
    ws.send({ type: "response.create", model: MODEL, previous_response_id: first.id, input: "two" });
    await ws.turn(1);
    const recorded = await simulatorRequests(simulatorUrl, marker);
    const bodies = recorded.map((r) => r.body as { instructions?: string });
    expect(bodies.map((b) => b.instructions)).toEqual(["SECRET-STYLE", undefined]);
    ws.close();
  });

  it("rejects unpaired tool calls and outputs with OpenAI's messages before calling upstream", async () => {
    const ws = await connect({ session: uniqueSession("pairing") });
    ws.send({
      type: "response.create",
      model: MODEL,
      input: [
        { role: "user", content: "hi" },
        { type: "function_call_output", call_id: "call_orphan", output: "x" },
      ],
    });
    const [orphan] = await ws.turn(0);
    expect(orphan).toMatchObject({
      type: "error",
      status: 400,
      error: {
        type: "invalid_request_error",
        param: "input",
        message: "No tool call found for function call output with call_id call_orphan.",
      },
    });
    ws.send({
      type: "response.create",
      model: MODEL,
      input: [
        { role: "user", content: "hi" },
        { type: "function_call", call_id: "call_open", name: "exec_command", arguments: "{}" },
        { role: "user", content: "no output given" },
      ],
    });
    const [missing] = await ws.turn(1);
    expect(missing).toMatchObject({
      type: "error",
      status: 400,
      error: { message: "No tool output found for function call call_open." },
    });
    // A chained turn that omits the output of the parent's call is rejected too.
    ws.send({ type: "response.create", model: MODEL, tools: [SHELL_TOOL], input: "run `pwd` [sim:tools=1]" });
    const withCall = responseOf(await ws.turn(2));
    const call = withCall.output.find((item) => item.type === "function_call")!;
    ws.send({
      type: "response.create",
      model: MODEL,
      previous_response_id: withCall.id,
      input: "ignore the tool",
    });
    const [unanswered] = await ws.turn(3);
    expect(unanswered).toMatchObject({
      type: "error",
      status: 400,
      error: { message: `No tool output found for function call ${call.call_id}.` },
    });
    ws.close();
  });

  it("answers previous_response_not_found for an unknown id", async () => {
    const ws = await connect({ session: uniqueSession("unknown") });
    ws.send({ type: "response.create", model: MODEL, previous_response_id: "resp_nope", input: "x" });
    const [error] = await ws.turn(0);
    expect(error).toMatchObject({
      type: "error",
      status: 400,
      error: {
        code: "previous_response_not_found",
        param: "previous_response_id",
        message: "Previous response with id 'resp_nope' not found.",
      },
    });
    ws.close();
  });
});
