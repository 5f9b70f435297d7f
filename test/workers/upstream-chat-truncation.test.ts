/**
 * `truncation` through the Chat Completions adapter (issue #4 "Must show"): the `sim-chat-small*`
 * route has a 300-token window (vitest.config.ts). `disabled` rejects an over-long context before
 * anything reaches the upstream; `auto` drops whole oldest turns, and the messages that reach
 * `/v1/chat/completions` keep each assistant `tool_calls` message next to its `tool` outputs.
 */
import { describe, expect, inject, it } from "vitest";
import { SHELL_TOOL } from "../support/fixtures.ts";
import { testId } from "../support/test-id.ts";
import {
  connect,
  type Frame,
  simulatorRequests,
  type TestSocket,
  uniqueSession,
} from "../support/ws-client.ts";

const MODEL = "sim-chat-small";
type Message = { role: string; content?: unknown; tool_calls?: Array<{ id: string }>; tool_call_id?: string };

const words = (word: string, n: number) => Array.from({ length: n }, () => word).join(" ");
const responseOf = (frames: Frame[]) =>
  (frames.at(-1) as unknown as { response: { id: string; output: Array<Record<string, unknown>> } }).response;

async function run(ws: TestSocket, n: number, body: Record<string, unknown>): Promise<Frame[]> {
  ws.send({ type: "response.create", model: MODEL, ...body });
  return ws.turn(n);
}

describe("truncation through the Chat Completions adapter", () => {
  it("disabled: an over-long context is a 400 context_length_exceeded and nothing is sent", async () => {
    const marker = `chat-trunc-off-${testId()}`;
    const ws = await connect({ session: uniqueSession("chat-trunc-off") });
    const [error] = await run(ws, 0, { input: `${marker} ${words("alpha", 400)}` });
    expect(error).toMatchObject({ type: "error", status: 400, error: { code: "context_length_exceeded" } });
    expect(await simulatorRequests(inject("simulatorUrl"), marker)).toHaveLength(0);
    ws.close();
  });

  it("auto: drops whole oldest turns and keeps tool calls next to their outputs", async () => {
    const marker = `chat-trunc-auto-${testId()}`;
    const ws = await connect({ session: uniqueSession("chat-trunc-auto") });
    const settings = { truncation: "auto", safety_identifier: marker, tools: [SHELL_TOOL] };
    let previous: string | null = null;
    let n = 0;
    for (const word of ["one", "two", "three", "four"]) {
      // Each user turn: a tool round (call + output), then a final answer.
      let frames = await run(ws, n++, {
        ...settings,
        input: `${words(word, 40)} run \`ls\``,
        previous_response_id: previous,
      });
      const call = responseOf(frames).output.find((item) => item.type === "function_call")!;
      frames = await run(ws, n++, {
        ...settings,
        previous_response_id: responseOf(frames).id,
        input: [{ type: "function_call_output", call_id: call.call_id, output: `${word} files` }],
      });
      expect(frames.at(-1)?.type).toBe("response.completed");
      previous = responseOf(frames).id;
    }
    const bodies = (await simulatorRequests(inject("simulatorUrl"), marker)).map(
      (r) => r.body as { messages: Message[] },
    );
    const last = bodies.at(-1)!.messages;
    const text = JSON.stringify(last);
    expect(text).not.toContain(words("one", 40)); // the oldest turn is gone
    expect(text).toContain("four files"); // the current input is there
    expect(last[0]?.role).toBe("user"); // a whole turn starts at a user message
    // Every assistant tool_calls message is directly followed by its tool outputs.
    last.forEach((message, index) => {
      if (message.tool_calls) {
        const ids = message.tool_calls.map((c) => c.id);
        const following = last.slice(index + 1, index + 1 + ids.length).map((m) => m.tool_call_id);
        expect(following).toEqual(ids);
      }
      if (message.role === "tool")
        expect(last[index - 1]?.role === "tool" || !!last[index - 1]?.tool_calls).toBe(true);
    });
    ws.close();
  });
});
