/**
 * Real clients through `npm start`'s stack against a Claude-shaped and a Gemini-shaped route
 * (issue #26: "real clients unchanged"): `UPSTREAMS` sends `claude-*` to the simulator's Anthropic
 * Messages endpoint (`anthropic-messages`, automatic cache breakpoints on) and `gemini-*` to its
 * Gemini endpoint (`gemini`). Each client runs the same three-round `exec_command` loop it runs
 * against the default route (test/support/e2e-tool-loop.ts) and gets the same answer:
 * - the `openai` SDK over HTTP, chaining with `previous_response_id`, and over `ResponsesWS`;
 * - the OpenAI Agents SDK's `Runner` (no `previousResponseId`: a full resend every step);
 * - the Vercel AI SDK's `generateText` with a tool.
 * The simulator's recorder shows every model request went out in the provider's own wire format
 * (never the Responses API), and the Anthropic route read the previous turns' prefix from its
 * prompt cache from the second request on (docs/anthropic.md, the breakpoint rule).
 * Codex CLI, which offers `web_search` (refused by these routes unless `hosted_tools: "omit"`) and a
 * `namespace` tool, runs against both kinds of route in test/node/e2e-codex-provider-routes.test.ts.
 */
import { createOpenAI } from "@ai-sdk/openai";
import { Agent, tool as agentsTool, OpenAIProvider, Runner } from "@openai/agents";
import { generateText, isStepCount, tool } from "ai";
import OpenAI from "openai";
import type { FunctionTool, Response, ResponseInputItem } from "openai/resources/responses/responses";
import { ResponsesWS } from "openai/resources/responses/ws";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { LOCAL_DEV_KEY } from "../../scripts/local-stack.ts";
import type { RecordedRequest } from "../../simulator/recorder.ts";
import { useProxiedStack } from "../support/e2e-stack.ts";
import { COMMAND, finalAnswer, TOOL_ROUNDS, toolLoopPrompt, toolOutput } from "../support/e2e-tool-loop.ts";

const ROUTES = [
  {
    model: "claude-*",
    api: "anthropic-messages",
    base_url: "{SIM}/v1",
    upstream_model: "claude-sim-1",
    api_key_var: "UPSTREAM_API_KEY",
  },
  {
    model: "gemini-*",
    api: "gemini",
    base_url: "{SIM}/v1beta",
    upstream_model: "gemini-3-flash-sim",
    api_key_var: "UPSTREAM_API_KEY",
  },
  { model: "*", api: "responses-ws", base_url: "{SIM}/v1" },
];

const e2e = useProxiedStack({
  UPSTREAMS: JSON.stringify(ROUTES),
  MODELS: "deltagate-sim,claude-sim,gemini-sim",
});

const PROVIDERS = [
  { model: "claude-sim", transport: "anthropic", path: "/v1/messages" },
  {
    model: "gemini-sim",
    transport: "gemini",
    path: "/v1beta/models/gemini-3-flash-sim:streamGenerateContent",
  },
] as const;

type Provider = (typeof PROVIDERS)[number];

const EXEC_COMMAND: FunctionTool = {
  type: "function",
  name: "exec_command",
  description: "Runs a shell command and returns its output.",
  parameters: {
    type: "object",
    properties: { cmd: { type: "string" } },
    required: ["cmd"],
    additionalProperties: false,
  },
  strict: true,
};

/**
 * Instructions long enough for Anthropic's prompt cache (1,024 tokens at least, as Claude's and the
 * simulator's minimum: docs/anthropic.md), so the openai SDK's loops show cache reads; `label` makes
 * each loop's prefix its own, so its first request finds nothing cached.
 */
function instructions(label: string): string {
  return `[${label}] ${"You are a careful shell agent: run one command at a time and read its output. ".repeat(80)}`;
}

function client(): OpenAI {
  return new OpenAI({ apiKey: LOCAL_DEV_KEY, baseURL: `${e2e.proxy.url}/v1`, maxRetries: 0 });
}

/** The function calls of a response, answered as the tool loop answers them (`calls` counts). */
function toolOutputs(response: Response, calls: string[]): ResponseInputItem[] {
  return response.output.flatMap((item) => {
    if (item.type !== "function_call") return [];
    const { cmd } = JSON.parse(item.arguments) as { cmd: string };
    calls.push(cmd);
    return [
      { type: "function_call_output" as const, call_id: item.call_id, output: toolOutput(cmd, calls.length) },
    ];
  });
}

/** The model requests the simulator received since `from` (its recorder's `seq`), in order. */
function upstreamSince(from: number): RecordedRequest[] {
  return e2e.stack.simulator!.recorder.list().filter((r) => r.seq > from);
}

function lastSeq(): number {
  return e2e.stack.simulator!.recorder.list().at(-1)?.seq ?? 0;
}

/** Every request went to the provider's own endpoint, one per model request, all answered. */
function expectProviderRequests(
  provider: Provider,
  requests: readonly RecordedRequest[],
  count: number,
): void {
  const diagnostics = JSON.stringify(requests.map((r) => [r.transport, r.path, r.status]));
  expect(
    requests.map((r) => [r.transport, r.path, r.status]),
    diagnostics,
  ).toEqual(Array(count).fill([provider.transport, provider.path, 200]));
}

/** Anthropic: from the second request on, the prefix the previous request wrote is read from cache. */
function expectCacheReads(provider: Provider, responses: readonly Response[]): void {
  if (provider.transport !== "anthropic") return;
  const cached = responses.map((r) => r.usage?.input_tokens_details.cached_tokens ?? 0);
  expect(cached[0]).toBe(0);
  for (const later of cached.slice(1)) expect(later).toBeGreaterThan(0);
}

describe.each(PROVIDERS)("real clients on the $model route ($transport)", (provider) => {
  it("the openai SDK over HTTP, chaining with previous_response_id: the tool loop as on any route", async () => {
    const openai = client();
    const from = lastSeq();
    const calls: string[] = [];
    const responses: Response[] = [];
    let input: string | ResponseInputItem[] = toolLoopPrompt(`http-${provider.model}`);
    let previous: string | undefined;
    for (let step = 0; step <= TOOL_ROUNDS; step += 1) {
      const response: Response = await openai.responses.create({
        model: provider.model,
        instructions: instructions(`http-${provider.model}`),
        input,
        tools: [EXEC_COMMAND],
        ...(previous ? { previous_response_id: previous } : {}),
      });
      expect(response.status).toBe("completed");
      responses.push(response);
      previous = response.id;
      input = toolOutputs(response, calls);
    }
    expect(calls).toEqual(Array(TOOL_ROUNDS).fill(COMMAND));
    expect(responses.at(-1)!.output_text).toBe(finalAnswer());
    expect(responses.map((r) => r.model)).toEqual(Array(TOOL_ROUNDS + 1).fill(provider.model));
    expectProviderRequests(provider, upstreamSince(from), TOOL_ROUNDS + 1);
    expectCacheReads(provider, responses);
  });

  it("the openai SDK's ResponsesWS: one socket, the tool loop as on any route", async () => {
    const ws = new ResponsesWS(client());
    const from = lastSeq();
    const calls: string[] = [];
    const responses: Response[] = [];
    try {
      let input: string | ResponseInputItem[] = toolLoopPrompt(`ws-${provider.model}`);
      let previous: string | undefined;
      for (let step = 0; step <= TOOL_ROUNDS; step += 1) {
        const done = new Promise<Response>((resolve, reject) => {
          const onEvent = (event: { type: string; response?: Response }) => {
            if (event.type === "response.completed" && event.response) {
              ws.off("event", onEvent);
              resolve(event.response);
            } else if (event.type === "error" || event.type === "response.failed") {
              ws.off("event", onEvent);
              reject(new Error(JSON.stringify(event)));
            }
          };
          ws.on("event", onEvent);
        });
        ws.send({
          type: "response.create",
          model: provider.model,
          instructions: instructions(`ws-${provider.model}`),
          input,
          tools: [EXEC_COMMAND],
          ...(previous ? { previous_response_id: previous } : {}),
        });
        const response = await done;
        responses.push(response);
        previous = response.id;
        input = toolOutputs(response, calls);
      }
    } finally {
      ws.close();
    }
    expect(calls).toEqual(Array(TOOL_ROUNDS).fill(COMMAND));
    const answer = responses.at(-1)!.output.find((item) => item.type === "message");
    expect(
      answer?.type === "message" && answer.content[0]?.type === "output_text" && answer.content[0].text,
    ).toBe(finalAnswer());
    expectProviderRequests(provider, upstreamSince(from), TOOL_ROUNDS + 1);
    expectCacheReads(provider, responses);
  });

  it("the Agents SDK (Runner, a full resend every step): passes unchanged", async () => {
    const calls: string[] = [];
    const execCommand = agentsTool({
      name: "exec_command",
      description: "Runs a shell command and returns its output.",
      parameters: z.object({ cmd: z.string() }),
      execute: async ({ cmd }) => {
        calls.push(cmd);
        return toolOutput(cmd, calls.length);
      },
    });
    const agent = new Agent({
      name: "shell",
      instructions: "Use the shell to answer.",
      model: provider.model,
      tools: [execCommand],
    });
    const runner = new Runner({
      modelProvider: new OpenAIProvider({
        openAIClient: client(),
        useResponses: true,
        useResponsesWebSocket: false,
      }),
      tracingDisabled: true,
    });
    const from = lastSeq();
    const result = await runner.run(agent, toolLoopPrompt(`agents-${provider.model}`), { maxTurns: 10 });
    expect(calls).toEqual(Array(TOOL_ROUNDS).fill(COMMAND));
    expect(result.finalOutput).toBe(finalAnswer());
    expectProviderRequests(provider, upstreamSince(from), TOOL_ROUNDS + 1);
  });

  it("the Vercel AI SDK (generateText with a tool): passes unchanged", async () => {
    const openai = createOpenAI({ baseURL: `${e2e.proxy.url}/v1`, apiKey: LOCAL_DEV_KEY });
    const calls: string[] = [];
    const from = lastSeq();
    const result = await generateText({
      model: openai.responses(provider.model),
      prompt: toolLoopPrompt(`ai-sdk-${provider.model}`),
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
    expect(result.text).toBe(finalAnswer());
    expectProviderRequests(provider, upstreamSince(from), TOOL_ROUNDS + 1);
  });
});
