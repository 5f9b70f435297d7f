/**
 * `truncation` end to end through the Worker (issue #4 §2, brief §4.4), against the `sim-small*`
 * route whose context window is 300 tokens (vitest.config.ts): `disabled` rejects an over-long
 * context with 400 `context_length_exceeded` before anything reaches the upstream; `auto` drops
 * whole oldest turns, never separating a `function_call` from its output and never the current
 * input, and rejects a current turn that alone does not fit. What reached the upstream is read
 * from the simulator's recorder; expected sizes are computed with the real tokenizer.
 */
import { describe, expect, inject, it } from "vitest";
import { itemTokens } from "../../src/context/item-tokens.ts";
import { loadTokenizer } from "../../src/context/tokenizer.ts";
import type { Item } from "../../src/protocol/items.ts";
import { testId } from "../support/test-id.ts";
import {
  connect,
  type Frame,
  simulatorRequests,
  type TestSocket,
  uniqueSession,
} from "../support/ws-client.ts";

const MODEL = "sim-small-model";
const WINDOW = 300;
const SHELL_TOOL = {
  type: "function",
  name: "exec_command",
  description: "Runs a shell command.",
  parameters: { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] },
};

type Body = { input: Item[] };

function words(word: string, n: number): string {
  return Array.from({ length: n }, () => word).join(" ");
}

function responseOf(frames: Frame[]): { id: string; output: Item[] } {
  return (frames.at(-1) as unknown as { response: { id: string; output: Item[] } }).response;
}

/** Sends a create and returns the n-th turn's frames. */
async function run(ws: TestSocket, n: number, body: Record<string, unknown>): Promise<Frame[]> {
  ws.send({ type: "response.create", model: MODEL, ...body });
  return ws.turn(n);
}

async function tokensOf(items: readonly Item[]): Promise<number> {
  const count = await loadTokenizer();
  return items.reduce((sum, item) => sum + itemTokens(item, count), 0);
}

const userText = (item: Item | undefined) =>
  JSON.stringify((item as { content?: unknown } | undefined)?.content ?? null);

describe("truncation", () => {
  it("disabled (the default): an over-long context is a 400 context_length_exceeded and nothing is sent", async () => {
    const marker = `trunc-off-${testId()}`;
    const ws = await connect({ session: uniqueSession("trunc-off") });
    const [error] = await run(ws, 0, { input: `${marker} ${words("alpha", 400)}` });
    expect(error).toMatchObject({
      type: "error",
      status: 400,
      error: {
        type: "invalid_request_error",
        code: "context_length_exceeded",
        param: "input",
        message:
          "Your input exceeds the context window of this model. Please adjust your input and try again.",
      },
    });
    expect(await simulatorRequests(inject("simulatorUrl"), marker)).toHaveLength(0);
    ws.close();
  });

  it("disabled also counts max_output_tokens against the window", async () => {
    const ws = await connect({ session: uniqueSession("trunc-reserve") });
    const input = `${words("beta", 150)} [sim:tokens=5]`;
    expect((await run(ws, 0, { input, max_output_tokens: 16 })).at(-1)?.type).toBe("response.completed");
    const [error] = await run(ws, 1, { input, max_output_tokens: 200 });
    expect(error).toMatchObject({ status: 400, error: { code: "context_length_exceeded" } });
    ws.close();
  });

  it("auto: drops whole oldest turns until the context fits, keeping the current input", async () => {
    const marker = `trunc-auto-${testId()}`;
    const ws = await connect({ session: uniqueSession("trunc-auto") });
    const settings = { truncation: "auto", safety_identifier: marker };
    const history: Item[] = [];
    let previous: string | null = null;
    for (const [n, word] of ["one", "two", "three", "four"].entries()) {
      const input = `${words(word, 60)} [sim:tokens=12]`;
      const frames = await run(ws, n, { ...settings, input, previous_response_id: previous });
      expect(frames.at(-1)?.type).toBe("response.completed");
      const response = responseOf(frames);
      history.push({ type: "message", role: "user", content: [{ type: "input_text", text: input }] });
      history.push(...response.output);
      previous = response.id;
    }
    const bodies = (await simulatorRequests(inject("simulatorUrl"), marker)).map((r) => r.body as Body);
    expect(bodies).toHaveLength(4);
    const last = bodies[3]!.input;
    // Whole turns were dropped from the front: what was sent is a suffix of the full context that
    // starts with a user message and ends with the current input.
    const full = history.slice(0, -1); // without turn 4's output
    expect(last.length).toBeLessThan(full.length);
    expect(last[0]).toMatchObject({ type: "message", role: "user" });
    expect(userText(last.at(-1))).toBe(userText(full.at(-1)));
    expect(last.map(userText)).toEqual(full.slice(full.length - last.length).map(userText));
    // It fits, and keeping one more turn (user message + answer) would not have.
    expect(await tokensOf(last)).toBeLessThanOrEqual(WINDOW);
    const oneMore = full.slice(full.length - last.length - 2);
    expect(await tokensOf(oneMore)).toBeGreaterThan(WINDOW);
    ws.close();
  });

  it("auto: never separates a function_call from its function_call_output", async () => {
    const marker = `trunc-tools-${testId()}`;
    const ws = await connect({ session: uniqueSession("trunc-tools") });
    const settings = { truncation: "auto", safety_identifier: marker, tools: [SHELL_TOOL] };
    const first = await run(ws, 0, {
      ...settings,
      input: `${words("early", 80)} [sim:tools=0] [sim:tokens=10]`,
    });
    const call = await run(ws, 1, {
      ...settings,
      previous_response_id: responseOf(first).id,
      input: "run `ls` [sim:tools=1]",
    });
    const fc = responseOf(call).output.find((item) => item.type === "function_call") as
      | { call_id: string }
      | undefined;
    expect(fc).toBeDefined();
    // The tool output is large: the context only fits once the first turn is dropped.
    const done = await run(ws, 2, {
      ...settings,
      previous_response_id: responseOf(call).id,
      input: [{ type: "function_call_output", call_id: fc!.call_id, output: words("file", 150) }],
    });
    expect(done.at(-1)?.type).toBe("response.completed");
    const bodies = (await simulatorRequests(inject("simulatorUrl"), marker)).map((r) => r.body as Body);
    const sent = bodies[2]!.input;
    expect(sent.map((item) => item.type)).toEqual(["message", "function_call", "function_call_output"]);
    expect(sent[1]).toMatchObject({ call_id: fc!.call_id });
    ws.close();
  });

  it("auto: a current turn that alone exceeds the window is a 400 context_length_exceeded", async () => {
    const marker = `trunc-big-${testId()}`;
    const ws = await connect({ session: uniqueSession("trunc-big") });
    const [error] = await run(ws, 0, { truncation: "auto", input: `${marker} ${words("gamma", 400)}` });
    expect(error).toMatchObject({ status: 400, error: { code: "context_length_exceeded", param: "input" } });
    expect(await simulatorRequests(inject("simulatorUrl"), marker)).toHaveLength(0);
    ws.close();
  });
});
