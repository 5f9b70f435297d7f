/**
 * The agent loop every scenario runs, independent of transport: send the instructions and the
 * prompt, run each function call the model asks for (here: a canned 2–8 KB output,
 * workload.ts), send the `function_call_output`s back, until the model answers with a message.
 * Owns the workload's shape check: a loop must take exactly `turns` turns and end with no
 * function call, otherwise its numbers would not be comparable and it throws.
 * Transports (`TurnTransport`) decide what goes on the wire: the whole history or only the delta,
 * over which API, and what happens after a dropped socket.
 */
import type { ResponseInputItem } from "openai/resources/responses/responses";
import type { TurnSample } from "./metrics.ts";
import { firstInput, toolOutput, toolOutputBytes } from "./workload.ts";

/** A function call the model made (Responses `function_call` or a Chat Completions tool call). */
export interface FunctionCall {
  callId: string;
  name: string;
  arguments: string;
}

/** What the loop hands a transport for one turn. */
export interface TurnInput {
  /** The items that are new since the previous turn (instructions + prompt, then tool outputs). */
  newItems: ResponseInputItem[];
  /** 1-based turn number. */
  turn: number;
  /** True on the loop's last turn. */
  last: boolean;
}

/** A finished turn. */
export interface TurnResult {
  /** The function calls the model made (none on the final answer). */
  calls: FunctionCall[];
  sample: TurnSample;
}

/** One way of sending turns (HTTP full history, HTTP chained, WebSocket delta, Chat, …). */
export interface TurnTransport {
  /**
   * Sends one turn and resolves at its terminal event.
   * @throws {Error} on `response.failed`/`response.incomplete`, an `error` event, an HTTP error,
   *   a closed socket, or a timeout.
   */
  turn(input: TurnInput): Promise<TurnResult>;
}

/** Parameters of one loop. */
export interface LoopParams {
  /** Total turns (the simulator is asked for `turns - 1` tool rounds). */
  turns: number;
  /** Unique per loop (see workload.ts). */
  nonce: string;
}

/**
 * Runs the loop over `transport`.
 * @returns one sample per turn, in order.
 * @throws {Error} from the transport, or when the model stops early or keeps calling tools after
 *   `turns` turns.
 */
export async function runAgentLoop(transport: TurnTransport, params: LoopParams): Promise<TurnSample[]> {
  const samples: TurnSample[] = [];
  let newItems: ResponseInputItem[] = firstInput(params.turns, params.nonce);
  for (let turn = 1; turn <= params.turns; turn++) {
    const last = turn === params.turns;
    const { calls, sample } = await transport.turn({ newItems, turn, last });
    samples.push(sample);
    if (last) {
      if (calls.length > 0) throw new Error(`the model still called a tool on turn ${turn} of ${turn}`);
      break;
    }
    if (calls.length === 0) {
      throw new Error(`the model answered after ${turn} turn(s); the workload needs ${params.turns}`);
    }
    newItems = calls.map((call) => ({
      type: "function_call_output",
      call_id: call.callId,
      output: toolOutput(turn, toolOutputBytes(turn)),
    }));
  }
  return samples;
}
