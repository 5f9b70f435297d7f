/**
 * Shared driver of the WebSocket-mode upstream tests: an agent-style tool loop through the real
 * Worker (the client sends only `function_call_output` items, chained by `previous_response_id`),
 * and readers of what the simulator recorded for it (requests and upstream connections).
 */
import { expect } from "vitest";
import { SHELL_TOOL } from "../support/fixtures.ts";
import { type Frame, type TestSocket, validateWithSdk } from "../support/ws-client.ts";

export { SHELL_TOOL };

/** The Response object of a terminal frame. */
export interface ResponseShape {
  id: string;
  status: string;
  output: Array<Record<string, unknown>>;
  error?: { code: string; message: string } | null;
}

/** The Response carried by the last (terminal) frame of a turn. */
export function responseOf(frames: Frame[]): ResponseShape {
  return (frames.at(-1) as unknown as { response: ResponseShape }).response;
}

/** One item of the context as the test expects the upstream to see it: its type and call id. */
export interface ContextEntry {
  type: string;
  call_id?: string;
}

/** What a finished loop produced. */
export interface LoopResult {
  responses: ResponseShape[];
  /** The full context of the last turn, oldest first (user message, then call/output pairs). */
  context: ContextEntry[];
  /** Items of the full context as the client knows them, for size estimates (ids removed). */
  contextItems: Array<Record<string, unknown>>;
}

/** Options of `runToolLoop`. */
export interface LoopOptions {
  model: string;
  /** Text of the first user message (carry the marker and `[sim:…]` directives). */
  prompt: string;
  /** Tool rounds the simulator is told to make (`[sim:tools=N]` must be in `prompt`). */
  rounds: number;
  store: boolean;
  /** Marker placed in every tool output, so every upstream frame of the loop can be found. */
  marker: string;
  /** Response id to chain the first turn on (e.g. a warm-up), or null. */
  previousResponseId?: string | null;
  /** Index of the first turn on this socket (frames of earlier turns are already there). */
  firstTurnIndex?: number;
  instructions?: string;
}

/**
 * Runs `rounds` tool rounds plus the final answer (rounds + 1 responses). Every response must
 * complete and pass the `openai` SDK accumulator.
 */
export async function runToolLoop(ws: TestSocket, options: LoopOptions): Promise<LoopResult> {
  const base = {
    type: "response.create",
    model: options.model,
    store: options.store,
    tools: [SHELL_TOOL],
    ...(options.instructions ? { instructions: options.instructions } : {}),
  };
  const userMessage = {
    type: "message",
    role: "user",
    content: [{ type: "input_text", text: options.prompt }],
  };
  const context: ContextEntry[] = [{ type: "message" }];
  const contextItems: Array<Record<string, unknown>> = [userMessage];
  const responses: ResponseShape[] = [];
  const firstTurn = options.firstTurnIndex ?? 0;
  ws.send({ ...base, previous_response_id: options.previousResponseId ?? null, input: [userMessage] });
  for (let turn = 0; turn <= options.rounds; turn++) {
    const frames = await ws.turn(firstTurn + turn);
    expect(frames.at(-1)?.type, `turn ${turn + 1}: ${JSON.stringify(frames.at(-1))}`).toBe(
      "response.completed",
    );
    await validateWithSdk(frames);
    const response = responseOf(frames);
    responses.push(response);
    if (turn === options.rounds) {
      expect(response.output.some((item) => item.type === "message")).toBe(true);
      break;
    }
    const call = response.output.find((item) => item.type === "function_call");
    expect(call, `turn ${turn + 1} made no function call`).toBeDefined();
    const callId = String(call?.call_id);
    const output = {
      type: "function_call_output",
      call_id: callId,
      output: `${options.marker} output of round ${turn + 1}`,
    };
    context.push(
      { type: "function_call", call_id: callId },
      { type: "function_call_output", call_id: callId },
    );
    const { id: _id, status: _status, ...callItem } = call ?? {};
    contextItems.push(callItem, output);
    ws.send({ ...base, previous_response_id: response.id, input: [output] });
  }
  return { responses, context, contextItems };
}

/** A request the simulator recorded (subset of `/_sim/requests` fields used here). */
export interface Recorded {
  seq: number;
  transport: string;
  bytes: number;
  body: { input?: Array<Record<string, unknown>>; generate?: boolean; previous_response_id?: string };
  contextItemCount: number | null;
  previousResponseId: string | null;
  status: number | null;
  simulatedFailure: string | null;
  connectionId: number | null;
  /** True when the upstream socket closed before the response finished. */
  aborted: boolean;
}

/** The simulator's records of requests whose raw body contains `marker`, in arrival order. */
export async function recorded(simulatorUrl: string, marker: string): Promise<Recorded[]> {
  const res = await fetch(`${simulatorUrl}/_sim/requests?contains=${encodeURIComponent(marker)}`);
  const body = (await res.json()) as { data: Recorded[] };
  return body.data.sort((a, b) => a.seq - b.seq);
}

/** One upstream WebSocket connection as the simulator logged it. */
export interface SimConnection {
  id: number;
  closedAt: number | null;
  closeCode: number | null;
  closeReason: string | null;
  closedBy: "client" | "server" | null;
  creates: number;
  responses: number;
}

/** The simulator's log of the given upstream connections. */
export async function connections(simulatorUrl: string, ids: Iterable<number>): Promise<SimConnection[]> {
  const list = [...new Set(ids)].join(",");
  const res = await fetch(`${simulatorUrl}/_sim/ws-connections?ids=${list}`);
  return ((await res.json()) as { data: SimConnection[] }).data;
}

/** The (type, call_id) sequence of a recorded request's `input`. */
export function entriesOf(input: Array<Record<string, unknown>> | undefined): ContextEntry[] {
  return (input ?? []).map((item) =>
    typeof item.call_id === "string"
      ? { type: String(item.type), call_id: item.call_id }
      : { type: String(item.type) },
  );
}

/** UTF-8 size of `value` as JSON, in bytes. */
export function jsonBytes(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value)).byteLength;
}
