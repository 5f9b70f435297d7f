/**
 * The Vercel AI SDK (`ai` 7 with `@ai-sdk/openai` 4's Responses model) through Deltagate, used as
 * its docs show: `generateText` with a function tool and a step limit, so the SDK runs the tool
 * and sends its result back, resending the whole conversation on every step (it does not chain
 * with `previous_response_id`). Against `npm start`'s stack (`wrangler dev`, the simulator as
 * upstream over WebSocket mode), the client passes unchanged and the simulator's recorder shows a
 * transparent delta on every step after the first (issue #18).
 */
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, isStepCount, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { LOCAL_DEV_KEY } from "../../scripts/local-stack.ts";
import { useProxiedStack } from "../support/e2e-stack.ts";
import {
  COMMAND,
  expectDeltaUpstream,
  expectFullResends,
  finalAnswer,
  recordingFetch,
  TOOL_ROUNDS,
  toolLoopPrompt,
  toolOutput,
} from "../support/e2e-tool-loop.ts";

const e2e = useProxiedStack();

describe("the Vercel AI SDK (generateText with a tool) through Deltagate", () => {
  it("passes unchanged, and every step after the first goes upstream as a delta", async () => {
    const client = recordingFetch();
    const openai = createOpenAI({ baseURL: `${e2e.proxy.url}/v1`, apiKey: LOCAL_DEV_KEY, fetch: client.fetch });
    const calls: string[] = [];
    e2e.stack.simulator!.recorder.clear();
    const result = await generateText({
      model: openai.responses("deltagate-sim"),
      prompt: toolLoopPrompt("ai-sdk"),
      tools: {
        exec_command: tool({
          description: "Runs a shell command and returns its output.",
          inputSchema: z.object({ cmd: z.string() }),
          execute: async ({ cmd }) => {
            calls.push(cmd);
            return toolOutput(cmd, calls.length);
          },
        }),
      },
      stopWhen: isStepCount(10),
      maxRetries: 0,
    });

    expect(calls).toEqual(Array(TOOL_ROUNDS).fill(COMMAND));
    expect(result.steps).toHaveLength(TOOL_ROUNDS + 1);
    expect(result.text).toBe(finalAnswer());
    expectFullResends(client.bodies);
    expectDeltaUpstream(e2e);
  });
});
