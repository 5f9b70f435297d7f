/**
 * The Chat Completions adapter end to end (issue #4 "Must show", Chat Completions part): a client
 * on Deltagate's WebSocket, model `sim-chat*` routed to the simulator's `/v1/chat/completions`
 * (vitest.config.ts). Checks what reaches the upstream through the simulator's recorder: the
 * full context rebuilt as `messages` every turn, parallel tool outputs sent back in reverse order
 * arriving in call order right after their assistant message, instructions never carried into a
 * later turn, and CJK/emoji text split inside code points across network writes arriving intact.
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

const MODEL = "sim-chat";

type Output = Array<Record<string, unknown>>;
type ChatMessage = {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id: string }>;
  tool_call_id?: string;
};

function responseOf(frames: Frame[]): { id: string; status: string; output: Output } {
  return (frames.at(-1) as unknown as { response: { id: string; status: string; output: Output } }).response;
}

function calls(output: Output): Array<{ call_id: string; arguments: string }> {
  return output.filter((item) => item.type === "function_call") as unknown as Array<{
    call_id: string;
    arguments: string;
  }>;
}

async function chatBodies(marker: string): Promise<Array<{ messages: ChatMessage[]; [k: string]: unknown }>> {
  const recorded = await simulatorRequests(inject("simulatorUrl"), marker);
  for (const record of recorded) expect(record.path).toBe("/v1/chat/completions");
  return recorded.map((r) => r.body as { messages: ChatMessage[] });
}

describe("Chat Completions upstream", () => {
  it("streams a text turn whose synthesized events pass the openai SDK accumulator", async () => {
    const marker = `chat-text-${testId()}`;
    const ws = await connect({ session: uniqueSession("chat-text") });
    ws.send({ type: "response.create", model: MODEL, input: `${marker} say something [sim:tokens=30]` });
    const frames = await ws.turn(0);
    expect(frames.at(-1)?.type).toBe("response.completed");
    const final = await validateWithSdk(frames);
    expect(final.output_text.length).toBeGreaterThan(0);
    expect(final.output_text).toBe(outputText(frames));
    expect(final.usage?.input_tokens).toBeGreaterThan(0);
    expect(final.usage?.output_tokens).toBeGreaterThan(0);
    const [body] = await chatBodies(marker);
    expect(body).toMatchObject({ model: MODEL, stream: true, stream_options: { include_usage: true } });
    expect(body?.messages).toEqual([{ role: "user", content: `${marker} say something [sim:tokens=30]` }]);
    ws.close();
  });

  it("runs a tool loop chained with previous_response_id, rebuilding the full context each turn", async () => {
    const marker = `chat-loop-${testId()}`;
    const ws = await connect({ session: uniqueSession("chat-loop") });
    ws.send({
      type: "response.create",
      model: MODEL,
      store: false,
      tools: [SHELL_TOOL],
      input: `${marker}: list files with \`ls\` [sim:tools=2]`,
    });
    let previous = responseOf(await ws.turn(0));
    for (let turn = 1; turn <= 2; turn++) {
      const [call] = calls(previous.output);
      expect(call, `turn ${turn}`).toBeDefined();
      expect(JSON.parse(call!.arguments)).toEqual({ cmd: "ls" });
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
    expect(outputText([{ type: "x", response: previous } as Frame])).toBe(
      "Done after 2 tool call(s). Last output: output 2",
    );
    const bodies = await chatBodies(marker);
    expect(bodies.map((b) => b.messages.map((m) => m.role))).toEqual([
      ["user"],
      ["user", "assistant", "tool"],
      ["user", "assistant", "tool", "assistant", "tool"],
    ]);
    expect(bodies[2]?.tools).toEqual([
      {
        type: "function",
        function: {
          name: "exec_command",
          description: SHELL_TOOL.description,
          parameters: SHELL_TOOL.parameters,
        },
      },
    ]);
    ws.close();
  });

  it("sends parallel tool outputs returned in reverse order as tool messages in call order", async () => {
    const marker = `chat-parallel-${testId()}`;
    const ws = await connect({ session: uniqueSession("chat-parallel") });
    ws.send({
      type: "response.create",
      model: MODEL,
      tools: [SHELL_TOOL],
      input: `${marker} run \`pwd\` three times [sim:tools=1] [sim:parallel=3]`,
    });
    const first = await ws.turn(0);
    await validateWithSdk(first);
    const made = calls(responseOf(first).output);
    expect(made).toHaveLength(3);
    ws.send({
      type: "response.create",
      model: MODEL,
      tools: [SHELL_TOOL],
      previous_response_id: responseOf(first).id,
      input: [...made].reverse().map((call) => ({
        type: "function_call_output",
        call_id: call.call_id,
        output: `out ${call.call_id}`,
      })),
    });
    const second = await ws.turn(1);
    expect(second.at(-1)?.type).toBe("response.completed");
    await validateWithSdk(second);
    const [, body] = await chatBodies(marker);
    const ids = made.map((call) => call.call_id);
    expect(body?.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool", "tool"]);
    expect(body?.messages[1]?.tool_calls?.map((c) => c.id)).toEqual(ids);
    expect(body?.messages.slice(2)).toEqual(
      ids.map((id) => ({ role: "tool", tool_call_id: id, content: `out ${id}` })),
    );
    ws.close();
  });

  it("sends only the current turn's instructions, as the single leading system message", async () => {
    const marker = `chat-instr-${testId()}`;
    const secret = `SECRET-STYLE-${testId()}`;
    const ws = await connect({ session: uniqueSession("chat-instr") });
    ws.send({ type: "response.create", model: MODEL, instructions: secret, input: `${marker} one` });
    const first = responseOf(await ws.turn(0));
    ws.send({ type: "response.create", model: MODEL, previous_response_id: first.id, input: "two" });
    const second = responseOf(await ws.turn(1));
    ws.send({
      type: "response.create",
      model: MODEL,
      previous_response_id: second.id,
      instructions: "NEW-STYLE",
      input: "three",
    });
    expect((await ws.turn(2)).at(-1)?.type).toBe("response.completed");
    const bodies = await chatBodies(marker);
    expect(bodies).toHaveLength(3);
    expect(bodies[0]?.messages[0]).toEqual({ role: "system", content: secret });
    expect(bodies[1]?.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(JSON.stringify(bodies[1])).not.toContain(secret);
    const third = bodies[2]?.messages ?? [];
    expect(third.filter((m) => m.role === "system" || m.role === "developer")).toEqual([
      { role: "system", content: "NEW-STYLE" },
    ]);
    expect(third[0]).toEqual({ role: "system", content: "NEW-STYLE" });
    expect(JSON.stringify(third)).not.toContain(secret);
    ws.close();
  });

  it("delivers CJK and emoji split inside code points across network writes intact", async () => {
    const marker = `chat-utf8-${testId()}`;
    const text = "日本語のテキスト🙂👍🏽 — ça marche";
    const ws = await connect({ session: uniqueSession("chat-utf8") });
    ws.send({
      type: "response.create",
      model: MODEL,
      tools: [SHELL_TOOL],
      input: `${marker} run \`echo 日本語🙂\` [sim:tools=1] [sim:split_chars=1]`,
    });
    const first = await ws.turn(0);
    await validateWithSdk(first);
    const [call] = calls(responseOf(first).output);
    // the arguments stream through function_call_arguments.delta, split the same way
    expect(JSON.parse(call!.arguments)).toEqual({ cmd: "echo 日本語🙂" });
    ws.send({
      type: "response.create",
      model: MODEL,
      tools: [SHELL_TOOL],
      previous_response_id: responseOf(first).id,
      input: [{ type: "function_call_output", call_id: call!.call_id, output: text }],
    });
    const second = await ws.turn(1);
    const final = await validateWithSdk(second);
    expect(final.output_text).toBe(`Done after 1 tool call(s). Last output: ${text}`);
    const deltas = second.filter((f) => f.type === "response.output_text.delta").map((f) => f.delta);
    expect(deltas.join("")).toBe(final.output_text);
    expect(JSON.stringify([...first, ...second])).not.toContain("\uFFFD");
    ws.close();
  });

  it("maps an upstream HTTP error before streaming to response.failed with its code", async () => {
    const ws = await connect({ session: uniqueSession("chat-429") });
    ws.send({ type: "response.create", model: MODEL, input: "busy [sim:fail=status:429]" });
    const frames = await ws.turn(0);
    expect(frames.at(-1)).toMatchObject({
      type: "response.failed",
      response: { status: "failed", error: { code: "rate_limit_exceeded" } },
    });
    ws.close();
  });

  it("fails the response when the upstream stream breaks mid-way", async () => {
    const ws = await connect({ session: uniqueSession("chat-midstream") });
    ws.send({ type: "response.create", model: MODEL, input: "go [sim:tokens=60] [sim:fail=midstream]" });
    const frames = await ws.turn(0);
    expect(frames[0]?.type).toBe("response.created");
    expect(frames.at(-1)).toMatchObject({
      type: "response.failed",
      response: { status: "failed", error: { code: "upstream_error" } },
    });
    ws.close();
  });
});
