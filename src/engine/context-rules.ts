/**
 * The checks a turn's context passes before any upstream call, each refusing what OpenAI refuses
 * with OpenAI's error (400 `invalid_request_error`). Pure: no I/O.
 * - Something to answer: a turn with no input and no `previous_response_id` is refused even with
 *   `instructions` (https://github.com/pydantic/pydantic-ai/pull/3470), in OpenAI's words for an
 *   empty array (as recorded for `messages`:
 *   https://github.com/envoyproxy/ai-gateway/blob/main/internal/testing/fakeopenai/cassettes/chat-no-messages.yaml).
 *   A WebSocket `generate: false` warm-up answers nothing, so it may carry no input.
 * - `max_output_tokens` is at least 16 (https://platform.openai.com/docs/api-reference/responses/create:
 *   "minimum 16"), refused in OpenAI's words for a minimum (`integer_below_min_value`, as recorded
 *   for `max_tokens`: https://github.com/envoyproxy/ai-gateway/blob/main/internal/testing/fakeopenai/cassettes/edge-bad-request.yaml).
 * - Tool-call pairing (tool-pairing.ts).
 * - A `reasoning` item is directly followed by the model item it belongs to (an assistant message
 *   or a tool call): `Item 'rs_…' of type 'reasoning' was provided without its required following
 *   item.` (https://github.com/continuedev/continue/issues/8933). Stored history is repaired
 *   before this check (history-repair.ts), so what it refuses is the client's own input.
 */
import { invalidRequest } from "../protocol/errors.ts";
import type { Item } from "../protocol/items.ts";
import { isModelItem } from "./history-repair.ts";
import { validateToolPairing } from "./tool-pairing.ts";

/** What the checks need to know about the turn besides its context. */
export interface TurnShape {
  /** The turn's own input items. */
  input: readonly Item[];
  /** It names a `previous_response_id`. */
  continues: boolean;
  /** False for a `generate: false` warm-up. */
  generate: boolean;
  /** It names a `prompt` template, whose own messages may be the whole input (OpenAI's). */
  prompted?: boolean;
  /** The request's `max_output_tokens`, if any. */
  maxOutputTokens?: number | null | undefined;
}

/** Minimum `max_output_tokens` of the Responses API. */
export const MIN_OUTPUT_TOKENS = 16;

/**
 * Validates a turn's full context (repaired history + input, oldest first).
 * @throws {ApiError} 400 on the first violation (see the module header).
 */
export function validateTurnContext(context: readonly Item[], turn: TurnShape): void {
  const max = turn.maxOutputTokens;
  if (typeof max === "number" && max < MIN_OUTPUT_TOKENS) {
    throw invalidRequest(
      `Invalid 'max_output_tokens': integer below minimum value. Expected a value >= ${MIN_OUTPUT_TOKENS}, but got ${max} instead.`,
      "max_output_tokens",
      "integer_below_min_value",
    );
  }
  if (turn.input.length === 0 && !turn.continues && turn.generate && !turn.prompted) {
    throw invalidRequest(
      "Invalid 'input': empty array. Expected an array with minimum length 1, but got an empty array instead.",
      "input",
      "empty_array",
    );
  }
  validateToolPairing(context);
  context.forEach((item, index) => {
    if (item.type !== "reasoning") return;
    const next = context[index + 1];
    if (next && isModelItem(next)) return;
    throw invalidRequest(
      `Item '${item.id ?? ""}' of type 'reasoning' was provided without its required following item.`,
      "input",
    );
  });
}
