/**
 * The Vercel AI SDK (`ai` 7 with `@ai-sdk/openai` 4's Responses model) through Deltagate, used as
 * its docs show: `generateText` with a function tool and a step limit, so the SDK runs the tool
 * and sends its result back, resending the whole conversation on every step (it does not chain
 * with `previous_response_id`). Against `npm start`'s stack (`wrangler dev`, the simulator as
 * upstream over WebSocket mode), the client passes unchanged and the simulator's recorder shows a
 * transparent delta on every step after the first (issue #18). With a reasoning model the SDK
 * sends earlier reasoning items and answers back as `item_reference`s (store:true, its default),
 * which Deltagate resolves to the items its session holds (src/resend/item-references.ts).
 */
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, isStepCount, type ModelMessage, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { LOCAL_DEV_KEY } from "../../scripts/local-stack.ts";
import { useSharedStack } from "../support/e2e-stack.ts";
import {
  COMMAND,
  expectDeltaUpstream,
  expectFullResends,
  finalAnswer,
  recordingFetch,
  TOOL_ROUNDS,
  toolLoopPrompt,
  toolLoopSteps,
  toolOutput,
  uniqueMarker,
} from "../support/e2e-tool-loop.ts";

const e2e = useSharedStack();

/** The SDK's OpenAI provider, through the recording proxy, sending with `fetch`. */
function provider(fetch: typeof globalThis.fetch) {
  return createOpenAI({ baseURL: `${e2e.proxy.url}/v1`, apiKey: LOCAL_DEV_KEY, fetch });
}

/** The `exec_command` tool; `calls` collects the commands it ran. */
function execCommand(calls: string[]) {
  return tool({
    description: "Runs a shell command and returns its output.",
    inputSchema: z.object({ cmd: z.string() }),
    execute: async ({ cmd }) => {
      calls.push(cmd);
      return toolOutput(cmd, calls.length);
    },
  });
}

describe("the Vercel AI SDK (generateText with a tool) through Deltagate", () => {
  it("passes unchanged, and every step after the first goes upstream as a delta", async () => {
    const client = recordingFetch();
    const openai = provider(client.fetch);
    const calls: string[] = [];
    const marker = uniqueMarker("ai-sdk");
    const result = await generateText({
      model: openai.responses("deltagate-sim"),
      prompt: toolLoopPrompt(marker),
      tools: { exec_command: execCommand(calls) },
      stopWhen: isStepCount(10),
      maxRetries: 0,
    });

    expect(calls).toEqual(Array(TOOL_ROUNDS).fill(COMMAND));
    expect(result.steps).toHaveLength(TOOL_ROUNDS + 1);
    expect(result.text).toBe(finalAnswer());
    expectFullResends(client.bodies);
    await expectDeltaUpstream(e2e.stack.simulatorUrl, marker);
  });

  it("with a reasoning model, over two turns: the items it sends back as item_reference are the session's, and every request after the first is a delta", async () => {
    // store:true (the default) makes the SDK send earlier reasoning items and answers back as
    // `{type: "item_reference", id}` (@ai-sdk/openai convert-to-openai-responses-input.ts).
    const client = recordingFetch();
    const openai = provider(client.fetch);
    const calls: string[] = [];
    const options = {
      model: openai.responses("deltagate-sim"),
      tools: { exec_command: execCommand(calls) },
      stopWhen: isStepCount(10),
      maxRetries: 0,
    };
    const marker = uniqueMarker("ai-sdk-reasoning");
    const messages: ModelMessage[] = [
      { role: "user", content: `${toolLoopPrompt(marker)} [sim:reasoning=1]` },
    ];
    const first = await generateText({ ...options, messages });
    expect(first.text).toBe(finalAnswer());
    messages.push(...first.responseMessages, {
      role: "user",
      content: "And now? [sim:tools=0] [sim:reasoning=1]",
    });
    const second = await generateText({ ...options, messages });

    expect(calls).toEqual(Array(TOOL_ROUNDS).fill(COMMAND));
    expect(second.text).toMatch(/^[A-Z][a-z]{2}( [a-z]{3})*\.$/);
    const references = client.bodies.map(
      (body) =>
        (body as { input: Array<{ type?: string }> }).input.filter((item) => item.type === "item_reference")
          .length,
    );
    // One reference per earlier reasoning item, plus the first turn's answer on the second turn.
    expect(references).toEqual([0, 1, 2, 3, 3 + 2]);
    // User, then reasoning + call + output per round; then reasoning + answer, and the new message.
    const loop = toolLoopSteps(3);
    await expectDeltaUpstream(e2e.stack.simulatorUrl, marker, [
      ...loop,
      { context: loop.at(-1)!.context + 2 + 1, sent: "message" },
    ]);
  });
});
