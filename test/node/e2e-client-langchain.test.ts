/**
 * LangChain (`@langchain/openai` 1's `ChatOpenAI` with `useResponsesApi: true`) through Deltagate,
 * used as its docs show: a tool bound with `bindTools`, and the tool loop written out — invoke the
 * model with the messages so far, run each tool call (`tool.invoke(toolCall)` gives the
 * `ToolMessage`), append, again until the model answers — so every step resends the whole
 * conversation (LangChain does not chain with `previous_response_id`). Against `npm start`'s stack
 * (`wrangler dev`, the simulator as upstream over WebSocket mode), the client passes unchanged and
 * the simulator's recorder shows a transparent delta on every step after the first (issue #18).
 */
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
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
  toolOutput,
  uniqueMarker,
} from "../support/e2e-tool-loop.ts";

const e2e = useSharedStack();

describe("LangChain (ChatOpenAI, useResponsesApi, bindTools) through Deltagate", () => {
  it("passes unchanged, and every step after the first goes upstream as a delta", async () => {
    const calls: string[] = [];
    const execCommand = tool(
      async ({ cmd }: { cmd: string }) => {
        calls.push(cmd);
        return toolOutput(cmd, calls.length);
      },
      {
        name: "exec_command",
        description: "Runs a shell command and returns its output.",
        schema: z.object({ cmd: z.string() }),
      },
    );
    const client = recordingFetch();
    const model = new ChatOpenAI({
      model: "deltagate-sim",
      apiKey: LOCAL_DEV_KEY,
      configuration: { baseURL: `${e2e.proxy.url}/v1`, fetch: client.fetch },
      useResponsesApi: true,
      maxRetries: 0,
    }).bindTools([execCommand]);
    const marker = uniqueMarker("langchain");

    const messages: BaseMessage[] = [new HumanMessage(toolLoopPrompt(marker))];
    let requests = 0;
    for (;;) {
      const reply = await model.invoke(messages);
      requests++;
      messages.push(reply);
      if (!reply.tool_calls?.length || requests > 10) break;
      for (const toolCall of reply.tool_calls) messages.push(await execCommand.invoke(toolCall));
    }

    expect(calls).toEqual(Array(TOOL_ROUNDS).fill(COMMAND));
    expect(requests).toBe(TOOL_ROUNDS + 1);
    expect(messages.at(-1)?.text).toBe(finalAnswer());
    expectFullResends(client.bodies);
    await expectDeltaUpstream(e2e.stack.simulatorUrl, marker);
  });
});
