/**
 * The OpenAI Agents SDK (`@openai/agents` 0.20) through Deltagate, used as its docs show: an
 * `Agent` with a function `tool`, run by a `Runner` without `previousResponseId`, so the SDK runs
 * the tool and resends the whole conversation on every model request — over HTTP (the Responses
 * model) and over its Responses WebSocket transport (`withResponsesWebSocketSession`, which builds
 * an `OpenAIProvider` with `useResponsesWebSocket: true`: one socket reused for the run). Against
 * `npm start`'s stack (`wrangler dev`, the simulator as upstream over WebSocket mode), the client
 * passes unchanged and the simulator's recorder shows a transparent delta on every step after the
 * first (issue #18). Tracing is off: it would export to OpenAI.
 */
import { Agent, OpenAIProvider, Runner, tool, withResponsesWebSocketSession } from "@openai/agents";
import OpenAI from "openai";
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

/** An agent with one `exec_command` tool; `calls` collects the commands it ran. */
function shellAgent(calls: string[]): Agent {
  const execCommand = tool({
    name: "exec_command",
    description: "Runs a shell command and returns its output.",
    parameters: z.object({ cmd: z.string() }),
    execute: async ({ cmd }) => {
      calls.push(cmd);
      return toolOutput(cmd, calls.length);
    },
  });
  return new Agent({
    name: "shell",
    instructions: "Use the shell to answer.",
    model: "deltagate-sim",
    tools: [execCommand],
  });
}

describe("the Agents SDK through Deltagate", () => {
  it("over HTTP (Runner, no previousResponseId): passes unchanged, every later step a delta upstream", async () => {
    const client = recordingFetch();
    const openAIClient = new OpenAI({
      apiKey: LOCAL_DEV_KEY,
      baseURL: `${e2e.proxy.url}/v1`,
      maxRetries: 0,
      fetch: client.fetch,
    });
    const runner = new Runner({
      modelProvider: new OpenAIProvider({ openAIClient, useResponses: true, useResponsesWebSocket: false }),
      tracingDisabled: true,
    });
    const calls: string[] = [];
    const marker = uniqueMarker("agents-http");
    const result = await runner.run(shellAgent(calls), toolLoopPrompt(marker), { maxTurns: 10 });

    expect(calls).toEqual(Array(TOOL_ROUNDS).fill(COMMAND));
    expect(result.rawResponses).toHaveLength(TOOL_ROUNDS + 1);
    expect(result.finalOutput).toBe(finalAnswer());
    expectFullResends(client.bodies);
    await expectDeltaUpstream(e2e.stack.simulatorUrl, marker);
  });

  it("over its WebSocket transport (one socket, no previousResponseId): passes unchanged, every later step a delta upstream", async () => {
    const calls: string[] = [];
    const marker = uniqueMarker("agents-ws");
    const framesBefore = e2e.proxy.frames.length;
    const upgradesBefore = e2e.proxy.upgrades.length;
    const result = await withResponsesWebSocketSession(
      ({ run }) => run(shellAgent(calls), toolLoopPrompt(marker), { maxTurns: 10 }),
      {
        providerOptions: { apiKey: LOCAL_DEV_KEY, baseURL: `${e2e.proxy.url}/v1` },
        runnerConfig: { tracingDisabled: true },
      },
    );

    expect(calls).toEqual(Array(TOOL_ROUNDS).fill(COMMAND));
    expect(result.rawResponses).toHaveLength(TOOL_ROUNDS + 1);
    expect(result.finalOutput).toBe(finalAnswer());
    // The SDK went over one WebSocket, never over HTTP, and resent everything on it.
    expect(e2e.proxy.upgrades.slice(upgradesBefore).map((u) => u.status)).toEqual([101]);
    const creates = e2e.proxy.frames
      .slice(framesBefore)
      .filter((f) => f.from === "client" && (f.data as { type?: unknown }).type === "response.create")
      .map((f) => f.data);
    expectFullResends(creates);
    await expectDeltaUpstream(e2e.stack.simulatorUrl, marker);
  });
});
