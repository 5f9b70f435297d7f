/**
 * src/context/truncation.ts: turn boundaries never separate a tool call from its output, for
 * function and custom tool calls alike, even when the output comes after a later user message.
 */
import { describe, expect, it } from "vitest";
import { turnStarts } from "../../../src/context/truncation.ts";
import type { Item } from "../../../src/protocol/items.ts";

const user = (text: string): Item => ({ type: "message", role: "user", content: text });

describe("turnStarts", () => {
  it("starts no turn at a user message while a function or custom tool call is open", () => {
    const items: Item[] = [
      user("a"),
      { type: "custom_tool_call", call_id: "k1", name: "apply_patch", input: "x" },
      user("meanwhile"),
      { type: "custom_tool_call_output", call_id: "k1", output: "done" },
      user("b"),
      { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
      user("meanwhile"),
      { type: "function_call_output", call_id: "c1", output: "ok" },
      user("c"),
    ];
    expect(turnStarts(items)).toEqual([0, 4, 8]);
  });
});
