/**
 * End to end with the real `openai` SDK used as the clients that do not chain use it (issue #18):
 * every step resends the whole conversation without `previous_response_id` — over HTTP with no
 * session header (as the Vercel AI SDK, LangChain and the Agents SDK over HTTP do), and over one
 * `ResponsesWS` socket (the Agents SDK's WebSocket transport without `previousResponseId`). Against
 * `wrangler dev` and the simulator (`npm start`'s stack, WebSocket mode upstream by default), the
 * simulator's recorder shows Deltagate sending only the new items upstream after the first step,
 * and every response of the HTTP conversation coming from one session Durable Object. The
 * simulator is shared with other files: a test's upstream requests are those of its marked
 * conversation (test/support/sim-recorder.ts).
 */
import OpenAI from "openai";
import type {
  Response as OpenAIResponse,
  ResponseInputItem,
  ResponsesServerEvent,
} from "openai/resources/responses/responses";
import { ResponsesWS } from "openai/resources/responses/ws";
import { describe, expect, it } from "vitest";
import { LOCAL_DEV_KEY } from "../../scripts/local-stack.ts";
import { responseOwner } from "../../src/util/ids.ts";
import { useSharedStack } from "../support/e2e-stack.ts";
import { markedUpstream } from "../support/sim-recorder.ts";
import { testId } from "../support/test-id.ts";

const e2e = useSharedStack();
const STEPS = 4;

const tools = [
  {
    type: "function" as const,
    name: "exec_command",
    strict: false,
    parameters: { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] },
  },
];

/** The client's next items after a response: the output of each tool call. */
function toolOutputs(response: OpenAIResponse, step: number): ResponseInputItem[] {
  return response.output.flatMap((item) =>
    item.type === "function_call"
      ? [{ type: "function_call_output" as const, call_id: item.call_id, output: `output of step ${step}` }]
      : [],
  );
}

describe("the openai SDK resending everything through Deltagate", () => {
  it("over HTTP with no session: one Durable Object, only the new items upstream after the first step", async () => {
    const marker = `[resend-http:${testId()}]`;
    const client = new OpenAI({ apiKey: LOCAL_DEV_KEY, baseURL: `${e2e.proxy.url}/v1`, maxRetries: 0 });
    const history: ResponseInputItem[] = [
      { role: "user", content: `${marker} list files with \`ls\` [sim:tools=${STEPS - 1}]` },
    ];
    const responses: OpenAIResponse[] = [];
    for (let step = 1; step <= STEPS; step++) {
      const response = await client.responses.create({ model: "deltagate-sim", tools, input: [...history] });
      expect(response.status).toBe("completed");
      expect(response.previous_response_id).toBeNull();
      responses.push(response);
      history.push(...(response.output as unknown as ResponseInputItem[]), ...toolOutputs(response, step));
    }
    expect(new Set(responses.map((r) => responseOwner(r.id))).size).toBe(1);
    const upstream = await markedUpstream(e2e.stack.simulatorUrl, marker);
    expect(upstream.map((r) => r.transport)).toEqual(Array(STEPS).fill("ws"));
    expect(upstream.map((r) => r.inputItemCount)).toEqual([1, ...Array(STEPS - 1).fill(1)]);
    expect(upstream.slice(1).every((r) => r.previousResponseId !== null)).toBe(true);
    // The first request carries the prompt, every later one a single function_call_output.
    const sizes = upstream.map((r) => r.bytes);
    for (const size of sizes.slice(1)) expect(size).toBeLessThan(sizes[0]! * 2);
  });

  it("over one ResponsesWS socket without previous_response_id: only the new items upstream", async () => {
    const marker = `[resend-ws:${testId()}]`;
    const client = new OpenAI({ apiKey: LOCAL_DEV_KEY, baseURL: `${e2e.proxy.url}/v1`, maxRetries: 0 });
    const ws = new ResponsesWS(client);
    const completed: OpenAIResponse[] = [];
    let wake: () => void = () => {};
    ws.on("event", (event: ResponsesServerEvent) => {
      if (event.type === "response.completed") {
        completed.push(event.response);
        wake();
      }
    });
    ws.on("error", (error) => {
      throw error;
    });
    const history: ResponseInputItem[] = [
      { role: "user", content: `${marker} list files with \`ls\` [sim:tools=${STEPS - 1}]` },
    ];
    try {
      for (let step = 1; step <= STEPS; step++) {
        const done = new Promise<void>((resolve) => {
          wake = resolve;
        });
        ws.send({
          type: "response.create",
          model: "deltagate-sim",
          store: false,
          tools,
          input: [...history],
        });
        await done;
        const response = completed.at(-1)!;
        history.push(...(response.output as unknown as ResponseInputItem[]), ...toolOutputs(response, step));
      }
    } finally {
      ws.close();
    }
    expect(completed).toHaveLength(STEPS);
    const upstream = await markedUpstream(e2e.stack.simulatorUrl, marker);
    expect(upstream.map((r) => r.inputItemCount)).toEqual([1, ...Array(STEPS - 1).fill(1)]);
    expect(upstream.slice(1).every((r) => r.previousResponseId !== null)).toBe(true);
  });
});
