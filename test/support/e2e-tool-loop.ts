/**
 * What the real-client tests of transparent deltas (issue #18; test/node/e2e-client-*.test.ts)
 * share: the prompt that makes the simulator ask for a given number of `exec_command` rounds, the
 * tool's deterministic output and the final answer the simulator gives after it, and the
 * recorder's view of what Deltagate sent upstream.
 * Each of those clients resends the whole conversation on every step (none chains with
 * `previous_response_id`); the recorder must show that, from the second model request on, only
 * the new item — the tool's `function_call_output`, or the user's next message — went upstream, on top of the upstream's
 * previous response, whose context holds the whole conversation. The simulator is shared with
 * other files (e2e-stack.ts `useSharedStack`): a test finds its upstream requests by the marker of
 * its prompt (sim-recorder.ts `markedUpstream`).
 */
import { expect } from "vitest";
import { markedUpstream } from "./sim-recorder.ts";
import { testId } from "./test-id.ts";

/** Tool rounds the simulator asks for: with the final answer, `TOOL_ROUNDS + 1` model requests. */
export const TOOL_ROUNDS = 3;

/** The command the simulator puts in every `exec_command` call (the prompt's backticked one). */
export const COMMAND = "ls -la";

/** A marker no other test's requests carry: `[label:id]` (test-id.ts: no digits). */
export function uniqueMarker(label: string): string {
  return `[${label}:${testId()}]`;
}

/**
 * A user prompt starting with `marker` (from `uniqueMarker`: unique per test, so affinity never
 * joins two tests' conversations, and the test finds its upstream requests by it).
 */
export function toolLoopPrompt(marker: string): string {
  return `${marker} list the files with \`${COMMAND}\` [sim:tools=${TOOL_ROUNDS}]`;
}

/** The tool's output for its `n`th call (1-based) with `cmd`. */
export function toolOutput(cmd: string, n: number): string {
  return `run ${n}: ${cmd} -> README.md package.json src`;
}

/** The simulator's final answer after the loop (simulator/answer-text.ts). */
export function finalAnswer(): string {
  return `Done after ${TOOL_ROUNDS} tool call(s). Last output: ${toolOutput(COMMAND, TOOL_ROUNDS)}`;
}

/** A client's `fetch` that records every JSON request body it sends (the client's own view). */
export function recordingFetch(): { fetch: typeof fetch; bodies: unknown[] } {
  const bodies: unknown[] = [];
  const recording: typeof fetch = async (input, init) => {
    if (typeof init?.body === "string") bodies.push(JSON.parse(init.body));
    return fetch(input, init);
  };
  return { fetch: recording, bodies };
}

/**
 * Asserts the client itself resent everything: its `creates` (request bodies or
 * `response.create` frames) name no `previous_response_id` and step k's input is the whole
 * conversation so far — the user's message, then a call and its output per earlier round.
 */
export function expectFullResends(creates: readonly unknown[]): void {
  const shapes = creates.map((body) => {
    const create = body as { input?: unknown[]; previous_response_id?: unknown };
    return { inputItems: create.input?.length, chained: create.previous_response_id != null };
  });
  expect(shapes).toEqual(
    Array.from({ length: TOOL_ROUNDS + 1 }, (_, step) => ({ inputItems: 1 + 2 * step, chained: false })),
  );
}

/** What one model request should send upstream: its one new item, on a context of this size. */
export interface UpstreamStep {
  /** Items of the upstream's context for the request (history plus the new item). */
  context: number;
  /** The `type` of the one item sent (`message` for the user's message). */
  sent: string;
}

/**
 * The upstream steps of one tool loop of `TOOL_ROUNDS` rounds: first the user's message alone,
 * then each round's tool output on a context grown by `itemsPerRound` (a call and its output; 3
 * with a reasoning item).
 * @param before items of the upstream's context before the loop's user message.
 */
export function toolLoopSteps(itemsPerRound = 2, before = 0): UpstreamStep[] {
  return Array.from({ length: TOOL_ROUNDS + 1 }, (_, step) => ({
    context: before + 1 + itemsPerRound * step,
    sent: step === 0 ? "message" : "function_call_output",
  }));
}

/**
 * Asserts the recorder shows a transparent delta on every step after the first: the first
 * request carries the user's message alone, every later one only its new item as a
 * `previous_response_id` turn whose upstream context is the whole conversation.
 * @param marker the test's prompt marker: its conversation's upstream requests are the ones asserted.
 */
export async function expectDeltaUpstream(
  simulatorUrl: string,
  marker: string,
  steps: readonly UpstreamStep[] = toolLoopSteps(),
): Promise<void> {
  const upstream = await markedUpstream(simulatorUrl, marker);
  const diagnostics = JSON.stringify(
    upstream.map((r) => ({
      transport: r.transport,
      inputItemCount: r.inputItemCount,
      contextItemCount: r.contextItemCount,
      previousResponseId: r.previousResponseId,
      bytes: r.bytes,
    })),
  );
  const shapes = upstream.map((r) => ({
    chained: r.previousResponseId !== null,
    context: r.contextItemCount,
    sent: ((r.body as { input?: Array<{ type?: string }> }).input ?? []).map(
      (item) => item.type ?? "message",
    ),
  }));
  expect(shapes, diagnostics).toEqual(
    steps.map((step, index) => ({ chained: index > 0, context: step.context, sent: [step.sent] })),
  );
}
