/**
 * What the real-client tests of transparent deltas (issue #18; test/node/e2e-client-*.test.ts)
 * share: the prompt that makes the simulator ask for a given number of `exec_command` rounds, the
 * tool's deterministic output and the final answer the simulator gives after it, and the
 * recorder's view of what Deltagate sent upstream.
 * Each of those clients resends the whole conversation on every step (none chains with
 * `previous_response_id`); the recorder must show that, from the second model request on, only
 * the new item — the tool's `function_call_output` — went upstream, on top of the upstream's
 * previous response, whose context holds the whole conversation.
 */
import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import type { RecordedRequest } from "../../simulator/recorder.ts";
import type { ProxiedStack } from "./e2e-stack.ts";

/** Tool rounds the simulator asks for: with the final answer, `TOOL_ROUNDS + 1` model requests. */
export const TOOL_ROUNDS = 3;

/** The command the simulator puts in every `exec_command` call (the prompt's backticked one). */
export const COMMAND = "ls -la";

/** A fresh user prompt (unique per test, so affinity never joins two tests' conversations). */
export function toolLoopPrompt(label: string): string {
  return `[${label}:${randomUUID()}] list the files with \`${COMMAND}\` [sim:tools=${TOOL_ROUNDS}]`;
}

/** The tool's output for its `n`th call (1-based) with `cmd`. */
export function toolOutput(cmd: string, n: number): string {
  return `run ${n}: ${cmd} -> README.md package.json src`;
}

/** The simulator's final answer after the loop (simulator/answer-text.ts). */
export function finalAnswer(): string {
  return `Done after ${TOOL_ROUNDS} tool call(s). Last output: ${toolOutput(COMMAND, TOOL_ROUNDS)}`;
}

/** The simulator's generating requests (warm-ups left out) since the recorder was cleared. */
export function upstreamRequests(e2e: ProxiedStack): RecordedRequest[] {
  return e2e.stack
    .simulator!.recorder.list()
    .filter((r) => (r.body as { generate?: unknown } | null)?.generate !== false);
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

/**
 * Asserts the recorder shows a transparent delta on every step after the first: the first
 * request carries the user's message alone, every later one only the previous step's tool output
 * as a `previous_response_id` turn whose upstream context is the whole conversation (the user's
 * message, then a call and its output per round).
 */
export function expectDeltaUpstream(e2e: ProxiedStack): void {
  const upstream = upstreamRequests(e2e);
  const diagnostics = JSON.stringify(
    upstream.map((r) => ({
      transport: r.transport,
      inputItemCount: r.inputItemCount,
      contextItemCount: r.contextItemCount,
      previousResponseId: r.previousResponseId,
      bytes: r.bytes,
    })),
  );
  const steps = TOOL_ROUNDS + 1;
  expect(upstream, diagnostics).toHaveLength(steps);
  expect(
    upstream.map((r) => r.inputItemCount),
    diagnostics,
  ).toEqual(Array(steps).fill(1));
  expect(
    upstream.map((r) => r.previousResponseId !== null),
    diagnostics,
  ).toEqual([false, ...Array(steps - 1).fill(true)]);
  expect(
    upstream.map((r) => r.contextItemCount),
    diagnostics,
  ).toEqual(Array.from({ length: steps }, (_, step) => 1 + 2 * step));
  for (const r of upstream.slice(1)) {
    const input = (r.body as { input?: Array<{ type?: string }> }).input;
    expect(
      input?.map((item) => item.type),
      diagnostics,
    ).toEqual(["function_call_output"]);
  }
}
