/**
 * `npm run demo`: a 20-turn agent tool loop through Deltagate with the `openai` SDK's
 * `ResponsesWS`, sending only the new items each turn (`previous_response_id` + the
 * `function_call_output`), running each shell command the model asks for, and printing each
 * turn's latency (ms from `response.create` to `response.completed`).
 * Env: DELTAGATE_URL (default http://127.0.0.1:8787/v1), DELTAGATE_API_KEY (default the local dev
 * key), MODEL (default deltagate-sim), TURNS (default 20).
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import OpenAI from "openai";
import type {
  Response as OpenAIResponse,
  ResponseFunctionToolCall,
} from "openai/resources/responses/responses";
import { ResponsesWS } from "openai/resources/responses/ws";

const run = promisify(execFile);
const baseURL = process.env.DELTAGATE_URL ?? "http://127.0.0.1:8787/v1";
const apiKey = process.env.DELTAGATE_API_KEY ?? "dg-local-dev-key";
const model = process.env.MODEL ?? "deltagate-sim";
const turns = Number(process.env.TURNS ?? 20);

const tools = [
  {
    type: "function" as const,
    name: "exec_command",
    description: "Runs a shell command and returns its output.",
    parameters: {
      type: "object",
      properties: { cmd: { type: "string" } },
      required: ["cmd"],
      additionalProperties: false,
    },
    strict: true,
  },
];

const client = new OpenAI({ apiKey, baseURL });
const ws = new ResponsesWS(client);
ws.on("error", (error) => {
  console.error("error event:", error.message);
  process.exitCode = 1;
});

/** Sends one response.create and resolves with the terminal Response. */
function turn(body: Record<string, unknown>): Promise<OpenAIResponse> {
  return new Promise((resolve, reject) => {
    const onEvent = (event: { type: string; response?: OpenAIResponse; error?: { message?: string } }) => {
      if (
        event.type === "response.completed" ||
        event.type === "response.failed" ||
        event.type === "response.incomplete"
      ) {
        ws.off("event", onEvent);
        if (event.type === "response.completed" && event.response) resolve(event.response);
        else reject(new Error(`${event.type}: ${JSON.stringify(event.response?.error)}`));
      } else if (event.type === "error") {
        ws.off("event", onEvent);
        reject(new Error(event.error?.message ?? "error event"));
      }
    };
    ws.on("event", onEvent);
    ws.send({ type: "response.create", model, tools, store: false, ...body } as never);
  });
}

async function shell(cmd: string): Promise<string> {
  try {
    const { stdout, stderr } = await run("bash", ["-c", cmd], { timeout: 10_000 });
    return (stdout + stderr).slice(0, 2000);
  } catch (error) {
    return `command failed: ${String(error)}`.slice(0, 2000);
  }
}

console.log(
  `Deltagate demo: ${turns}-turn tool loop over ${baseURL.replace(/^http/, "ws")}/responses with model ${model}`,
);
let previous = await (async () => {
  const started = performance.now();
  const response = await turn({
    input: `List the files here with \`ls\`, then keep checking. [sim:tools=${turns - 1}]`,
  });
  console.log(
    `turn  1: ${(performance.now() - started).toFixed(1).padStart(7)} ms  (${response.output.map((o) => o.type).join(", ")})`,
  );
  return response;
})();
for (let n = 2; n <= turns; n++) {
  const calls = previous.output.filter((o): o is ResponseFunctionToolCall => o.type === "function_call");
  if (calls.length === 0) break;
  const outputs = await Promise.all(
    calls.map(async (call) => {
      const { cmd } = JSON.parse(call.arguments) as { cmd: string };
      return { type: "function_call_output" as const, call_id: call.call_id, output: await shell(cmd) };
    }),
  );
  const started = performance.now();
  previous = await turn({ previous_response_id: previous.id, input: outputs });
  const kinds = previous.output.map((o) => o.type).join(", ");
  console.log(
    `turn ${String(n).padStart(2)}: ${(performance.now() - started).toFixed(1).padStart(7)} ms  (sent ${outputs.length} new item(s); got ${kinds})`,
  );
}
console.log(`final answer: ${previous.output_text.slice(0, 200)}`);
ws.close({ code: 1000, reason: "demo done" });
