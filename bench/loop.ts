/**
 * The agent loop every scenario runs, independent of transport: send the prompt, run each
 * `function_call` the model asks for (here: the canned ~2 KB `toolOutput`), send the
 * `function_call_output`s back, until the model answers with a message.
 * Owns the workload's shape check: a loop must take exactly `turns` turns and end with no
 * function call, otherwise its numbers would not be comparable and it throws.
 * Transports (`TurnTransport`) decide what goes on the wire: the whole history or only the delta.
 */
import type {
  Response as OpenAIResponse,
  ResponseFunctionToolCall,
  ResponseInputItem,
} from "openai/resources/responses/responses";
import type { TurnSample } from "./metrics.ts";
import { firstPrompt, toolOutput } from "./workload.ts";

/** What the loop hands a transport for one turn. */
export interface TurnInput {
  /** The items that are new since the previous turn (the prompt, then `function_call_output`s). */
  newItems: ResponseInputItem[];
  /** The previous turn's terminal `Response` (null on the first turn). */
  previous: OpenAIResponse | null;
}

/** A finished turn: the terminal `Response` and what the client measured. */
export interface TurnResult {
  response: OpenAIResponse;
  sample: TurnSample;
}

/** One way of sending turns (HTTP full history, HTTP delta, WebSocket delta, …). */
export interface TurnTransport {
  /**
   * Sends one turn and resolves at its `response.completed`.
   * @throws {Error} on `response.failed`/`response.incomplete`, an `error` event, an HTTP error,
   *   a closed socket, or a timeout.
   */
  turn(input: TurnInput): Promise<TurnResult>;
}

/** Parameters of one loop. */
export interface LoopParams {
  /** Total turns (the simulator is asked for `turns - 1` tool rounds). */
  turns: number;
  /** Size of each tool output, in bytes. */
  toolOutputBytes: number;
  /** Unique per loop (see workload.ts). */
  nonce: string;
}

function functionCalls(response: OpenAIResponse): ResponseFunctionToolCall[] {
  return response.output.filter((item): item is ResponseFunctionToolCall => item.type === "function_call");
}

/**
 * Runs the loop over `transport`.
 * @returns one sample per turn, in order.
 * @throws {Error} from the transport, or when the model stops early or keeps calling tools after
 *   `turns` turns.
 */
export async function runAgentLoop(transport: TurnTransport, params: LoopParams): Promise<TurnSample[]> {
  const samples: TurnSample[] = [];
  let input: TurnInput = {
    newItems: [{ type: "message", role: "user", content: firstPrompt(params.turns, params.nonce) }],
    previous: null,
  };
  for (let turn = 1; turn <= params.turns; turn++) {
    const { response, sample } = await transport.turn(input);
    samples.push(sample);
    const calls = functionCalls(response);
    if (turn === params.turns) {
      if (calls.length > 0) throw new Error(`the model still called a tool on turn ${turn} of ${turn}`);
      break;
    }
    if (calls.length === 0) {
      throw new Error(`the model answered after ${turn} turn(s); the workload needs ${params.turns}`);
    }
    input = {
      newItems: calls.map((call) => ({
        type: "function_call_output",
        call_id: call.call_id,
        output: toolOutput(turn, params.toolOutputBytes),
      })),
      previous: response,
    };
  }
  return samples;
}
