/**
 * src/engine/tool-pairing.ts: OpenAI's pairing errors (function and custom tool calls) and the
 * wire order that keeps every output in its call's tool group.
 */
import { describe, expect, it } from "vitest";
import { validateToolPairing } from "../../../src/engine/tool-pairing.ts";
import { ApiError } from "../../../src/protocol/errors.ts";
import type { Item } from "../../../src/protocol/items.ts";
import { adjacentToolOutputs } from "../../../src/protocol/tool-calls.ts";

const user = (text: string): Item => ({ type: "message", role: "user", content: text });
const assistant = (text: string): Item => ({ type: "message", role: "assistant", content: text });
const call = (id: string): Item => ({ type: "function_call", call_id: id, name: "f", arguments: "{}" });
const out = (id: string): Item => ({ type: "function_call_output", call_id: id, output: "ok" });
const reasoning = (id: string): Item => ({ type: "reasoning", id, summary: [] });

function label(item: Item): string {
  const fields = item as { call_id?: string; content?: string; id?: string };
  if (item.type === "function_call") return `call:${fields.call_id}`;
  if (item.type === "function_call_output") return `out:${fields.call_id}`;
  if (item.type === "reasoning") return `rs:${fields.id}`;
  return `${(item as { role: string }).role}:${fields.content}`;
}

function pairingError(context: Item[]): unknown {
  try {
    validateToolPairing(context);
  } catch (err) {
    return err instanceof ApiError ? { status: err.status, message: err.message, param: err.param } : err;
  }
  return null;
}

describe("validateToolPairing", () => {
  it("accepts outputs anywhere after their calls, as OpenAI does", () => {
    expect(pairingError([user("a"), call("c1"), user("b"), out("c1")])).toBeNull();
  });

  it("refuses custom tool calls without output and outputs without call, in OpenAI's words", () => {
    const custom: Item = { type: "custom_tool_call", call_id: "k1", name: "apply_patch", input: "x" };
    expect(pairingError([user("a"), custom])).toEqual({
      status: 400,
      message: "No tool output found for custom tool call k1.",
      param: "input",
    });
    const orphan: Item = { type: "custom_tool_call_output", call_id: "k2", output: "x" };
    expect(pairingError([user("a"), orphan])).toMatchObject({
      message: "No tool call found for custom tool call output with call_id k2.",
    });
    expect(pairingError([user("a"), call("c1")])).toMatchObject({
      message: "No tool output found for function call c1.",
    });
  });
});

describe("adjacentToolOutputs", () => {
  it("moves an output sent after a later message back next to its call", () => {
    const moved = adjacentToolOutputs([user("a"), call("c1"), user("b"), out("c1")]);
    expect(moved.map(label)).toEqual(["user:a", "call:c1", "out:c1", "user:b"]);
  });

  it("leaves a context whose outputs are already in their groups untouched (same array)", () => {
    const items = [user("a"), call("c1"), call("c2"), out("c2"), out("c1"), assistant("done")];
    expect(adjacentToolOutputs(items)).toBe(items);
  });

  it("inserts outputs before a reasoning item that closes the group, keeping it before its item", () => {
    const moved = adjacentToolOutputs([call("c1"), reasoning("rs1"), assistant("x"), out("c1")]);
    expect(moved.map(label)).toEqual(["call:c1", "out:c1", "rs:rs1", "assistant:x"]);
  });

  it("in a delta, puts outputs of calls already upstream first", () => {
    const moved = adjacentToolOutputs([user("note"), out("c9"), out("c8")]);
    expect(moved.map(label)).toEqual(["out:c9", "out:c8", "user:note"]);
  });

  it("places each output of parallel calls in its own group, in call order when moved", () => {
    const moved = adjacentToolOutputs([call("c1"), call("c2"), user("b"), out("c2"), out("c1")]);
    expect(moved.map(label)).toEqual(["call:c1", "call:c2", "out:c1", "out:c2", "user:b"]);
  });
});
