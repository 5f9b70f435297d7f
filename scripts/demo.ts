/**
 * `npm run demo`: a 20-turn agent tool loop through Deltagate with the `openai` SDK's
 * `ResponsesWS` on one WebSocket. After the first turn the client sends only the new items
 * (`previous_response_id` + one `function_call_output`); Deltagate rebuilds the full context.
 * The demo runs each `exec_command` the model asks for in bash (as an agent would: with the
 * simulator that is `ls`) and prints each turn's latency: ms from sending `response.create` to
 * receiving its `response.completed`, as measured by this client.
 * Env: DELTAGATE_URL (default http://127.0.0.1:8787/v1), DELTAGATE_API_KEY (default the local dev
 * key), MODEL (default deltagate-sim), TURNS (default 20), DEMO_TAG (optional text appended to the
 * first user message, so a test can find this run's upstream requests in the simulator recorder).
 * Exit code: 0 when every turn completed, 1 on any error event, failed turn, socket close or
 * timeout (the message says which).
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import OpenAI from "openai";
import type {
  Response as OpenAIResponse,
  ResponseFunctionToolCall,
  ResponseInputItem,
  ResponsesServerEvent,
} from "openai/resources/responses/responses";
import { ResponsesWS } from "openai/resources/responses/ws";

/** Longest a single turn may take before the demo gives up, in ms. */
const TURN_TIMEOUT_MS = 30_000;
/** Longest a tool command may run, in ms. */
const COMMAND_TIMEOUT_MS = 10_000;
/** Characters of command output sent back as the `function_call_output`. */
const MAX_OUTPUT_CHARS = 2_000;

const run = promisify(execFile);
const baseURL = process.env.DELTAGATE_URL ?? "http://127.0.0.1:8787/v1";
const apiKey = process.env.DELTAGATE_API_KEY ?? "dg-local-dev-key";
const model = process.env.MODEL ?? "deltagate-sim";
const turns = Number(process.env.TURNS ?? 20);
const tag = process.env.DEMO_TAG ? ` ${process.env.DEMO_TAG}` : "";

if (!Number.isInteger(turns) || turns < 1) {
  console.error(`TURNS must be a positive integer, got ${process.env.TURNS}`);
  process.exit(2);
}

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

/** Rejects the turn in flight (if any): set while a turn waits for its terminal event. */
let failTurn: ((error: Error) => void) | null = null;
ws.on("error", (error) => {
  // Request-level `error` events are handled per turn; this also covers transport errors.
  failTurn?.(new Error(`error: ${error.message}`));
});
ws.on("close", (code, reason) => {
  failTurn?.(new Error(`the WebSocket closed (${code} ${reason}) before the turn completed`));
});

/**
 * Sends one `response.create` (store:false, the demo's tools) and resolves with the terminal
 * `Response` of `response.completed`.
 * @throws {Error} on `response.failed`/`response.incomplete`, an `error` event, a closed socket,
 *   or no terminal event within 30 s.
 */
function turn(body: {
  input: string | ResponseInputItem[];
  previous_response_id?: string;
}): Promise<OpenAIResponse> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => done(new Error(`no terminal event within ${TURN_TIMEOUT_MS} ms`)),
      TURN_TIMEOUT_MS,
    );
    const onEvent = (event: ResponsesServerEvent) => {
      if (event.type === "response.completed") done(null, event.response);
      else if (event.type === "response.failed" || event.type === "response.incomplete") {
        done(
          new Error(
            `${event.type}: ${JSON.stringify(event.response.error ?? event.response.incomplete_details)}`,
          ),
        );
      } else if (event.type === "error") {
        done(new Error(`error event: ${JSON.stringify(event)}`));
      }
    };
    function done(error: Error | null, response?: OpenAIResponse): void {
      clearTimeout(timer);
      ws.off("event", onEvent);
      failTurn = null;
      if (error || !response) reject(error ?? new Error("no response"));
      else resolve(response);
    }
    failTurn = (error) => done(error);
    ws.on("event", onEvent);
    ws.send({ type: "response.create", model, tools, store: false, ...body });
  });
}

/** Runs a command in bash; returns its stdout+stderr (or the failure), cut to 2,000 characters. */
async function shell(cmd: string): Promise<string> {
  try {
    const { stdout, stderr } = await run("bash", ["-c", cmd], { timeout: COMMAND_TIMEOUT_MS });
    return (stdout + stderr).slice(0, MAX_OUTPUT_CHARS);
  } catch (error) {
    return `command failed: ${String(error)}`.slice(0, MAX_OUTPUT_CHARS);
  }
}

/** The text of a response's `output_text` parts (raw WebSocket events carry no `output_text`). */
function outputText(response: OpenAIResponse): string {
  return response.output
    .flatMap((item) => (item.type === "message" ? item.content : []))
    .map((part) => (part.type === "output_text" ? part.text : ""))
    .join("");
}

function ms(started: number): string {
  return `${(performance.now() - started).toFixed(1).padStart(7)} ms`;
}

async function main(): Promise<void> {
  console.log(
    `Deltagate demo: ${turns}-turn tool loop over ${baseURL.replace(/^http/, "ws")}/responses with model ${model}`,
  );
  let started = performance.now();
  let previous = await turn({
    input: `List the files here with \`ls\`, then keep checking. [sim:tools=${turns - 1}]${tag}`,
  });
  console.log(
    `turn  1: ${ms(started)}  (sent the prompt; got ${previous.output.map((o) => o.type).join(", ")})`,
  );
  let completed = 1;
  for (let n = 2; n <= turns; n++) {
    const calls = previous.output.filter((o): o is ResponseFunctionToolCall => o.type === "function_call");
    if (calls.length === 0) break; // the model answered early: a real model may
    const outputs = await Promise.all(
      calls.map(async (call): Promise<ResponseInputItem> => {
        const { cmd } = JSON.parse(call.arguments) as { cmd: string };
        return { type: "function_call_output", call_id: call.call_id, output: await shell(cmd) };
      }),
    );
    started = performance.now();
    previous = await turn({ previous_response_id: previous.id, input: outputs });
    completed = n;
    const kinds = previous.output.map((o) => o.type).join(", ");
    console.log(
      `turn ${String(n).padStart(2)}: ${ms(started)}  (sent ${outputs.length} new item(s); got ${kinds})`,
    );
  }
  const answer = outputText(previous);
  console.log(
    `final answer after ${completed} turn(s): ${answer ? answer.replace(/\s+/g, " ").slice(0, 200) : "(none: still calling tools)"}`,
  );
}

/** Closes the socket (1000) and waits up to 1 s for the close handshake, so the server sees a clean close. */
async function closeSocket(reason: string): Promise<void> {
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 1_000);
    ws.on("close", () => {
      clearTimeout(timer);
      resolve();
    });
    ws.close({ code: 1000, reason });
  });
}

try {
  await main();
  await closeSocket("demo done");
  process.exit(0);
} catch (error) {
  console.error(`demo failed: ${error instanceof Error ? error.message : String(error)}`);
  await closeSocket("demo failed");
  process.exit(1);
}
