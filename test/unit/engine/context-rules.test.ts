/**
 * src/engine/context-rules.ts: a turn OpenAI would refuse is refused with OpenAI's error —
 * nothing to answer, a reasoning item without its following item, pairing.
 */
import { describe, expect, it } from "vitest";
import { validateTurnContext } from "../../../src/engine/context-rules.ts";
import { ApiError } from "../../../src/protocol/errors.ts";
import type { Item } from "../../../src/protocol/items.ts";

const user: Item = { type: "message", role: "user", content: "hi" };
const assistant: Item = { type: "message", role: "assistant", content: "ok" };
const reasoning: Item = { type: "reasoning", id: "rs_1", summary: [] };

function refusal(context: Item[], input: Item[], continues = false, generate = true): unknown {
  try {
    validateTurnContext(context, { input, continues, generate });
  } catch (err) {
    if (err instanceof ApiError)
      return { status: err.status, code: err.code, param: err.param, message: err.message };
    throw err;
  }
  return null;
}

describe("validateTurnContext", () => {
  it("refuses an empty input on a new chain, except for a warm-up or a continuation", () => {
    expect(refusal([], [])).toEqual({
      status: 400,
      code: "empty_array",
      param: "input",
      message:
        "Invalid 'input': empty array. Expected an array with minimum length 1, but got an empty array instead.",
    });
    expect(refusal([], [], false, false)).toBeNull();
    expect(refusal([user, assistant], [], true)).toBeNull();
  });

  it("accepts an empty input with a prompt template, whose messages may be the whole input", () => {
    expect(() =>
      validateTurnContext([], { input: [], continues: false, generate: true, prompted: true }),
    ).not.toThrow();
  });

  it("refuses max_output_tokens below 16, in OpenAI's words", () => {
    const turn = { input: [user], continues: false, generate: true };
    expect(() => validateTurnContext([user], { ...turn, maxOutputTokens: 10 })).toThrow(
      "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 10 instead.",
    );
    expect(() => validateTurnContext([user], { ...turn, maxOutputTokens: 16 })).not.toThrow();
  });

  it("refuses a reasoning item not followed by a model item", () => {
    const message = "Item 'rs_1' of type 'reasoning' was provided without its required following item.";
    expect(refusal([user, reasoning], [reasoning])).toMatchObject({ status: 400, param: "input", message });
    expect(refusal([user, reasoning, user], [reasoning, user])).toMatchObject({ message });
    expect(refusal([user, reasoning, assistant, user], [user])).toBeNull();
    const call: Item = { type: "function_call", call_id: "c1", name: "f", arguments: "{}" };
    const output: Item = { type: "function_call_output", call_id: "c1", output: "x" };
    expect(refusal([user, reasoning, call, output], [output])).toBeNull();
  });
});
