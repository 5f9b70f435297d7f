/**
 * Automatic cache breakpoints (src/upstream/anthropic/cache-breakpoints.ts): the static prefix,
 * the previous request's end and the tail are marked, never more than 4, never a thinking block,
 * never a prefix below the minimum cacheable length; the TTL follows the retention asked for.
 */
import { describe, expect, it } from "vitest";
import {
  type CacheablePrompt,
  placeBreakpoints,
} from "../../../../src/upstream/anthropic/cache-breakpoints.ts";
import type { AnthropicMessage } from "../../../../src/upstream/anthropic/wire.ts";

const text = (words: number) => ({ type: "text" as const, text: "word ".repeat(words) });

function loop(turns: number): AnthropicMessage[] {
  const messages: AnthropicMessage[] = [{ role: "user", content: [text(50)] }];
  for (let turn = 0; turn < turns; turn++) {
    messages.push({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "hmm", signature: "sig" },
        { type: "tool_use", id: `toolu_${turn}`, name: "exec", input: { cmd: "ls" } },
      ],
    });
    messages.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `toolu_${turn}`, content: "out" }],
    });
  }
  return messages;
}

function marks(prompt: CacheablePrompt) {
  const blocks = [
    ...(prompt.tools ?? []),
    ...(prompt.system ?? []),
    ...prompt.messages.flatMap((m) => m.content),
  ];
  return blocks.filter((block) => block.cache_control);
}

describe("placeBreakpoints", () => {
  it("marks the system prompt, the previous request's end and the tail", () => {
    const prompt: CacheablePrompt = {
      tools: [{ name: "exec", input_schema: { type: "object" } }],
      system: [text(400)],
      messages: loop(3),
    };
    const placed = placeBreakpoints(prompt, 100);
    expect(placed).toHaveLength(3);
    expect(prompt.system?.[0]?.cache_control).toEqual({ type: "ephemeral" });
    expect(prompt.tools?.[0]?.cache_control).toBeUndefined(); // covered by the system breakpoint
    const messages = prompt.messages;
    expect(messages.at(-1)?.content.at(-1)?.cache_control).toEqual({ type: "ephemeral" }); // tail
    expect(messages.at(-3)?.content.at(-1)?.cache_control).toEqual({ type: "ephemeral" }); // previous end
    expect(marks(prompt)).toHaveLength(3);
  });

  it("marks the last tool when there is no system prompt", () => {
    const prompt: CacheablePrompt = {
      tools: [
        { name: "a", input_schema: { description: "x".repeat(2000) } },
        { name: "b", input_schema: { type: "object" } },
      ],
      messages: [{ role: "user", content: [text(10)] }],
    };
    placeBreakpoints(prompt, 100);
    expect(prompt.tools?.[0]?.cache_control).toBeUndefined();
    expect(prompt.tools?.[1]?.cache_control).toEqual({ type: "ephemeral" });
  });

  it("never marks a thinking block: the last other block of the message is marked", () => {
    const prompt: CacheablePrompt = {
      system: [text(400)],
      messages: [
        { role: "user", content: [text(400)] },
        { role: "assistant", content: [{ type: "thinking", thinking: "x", signature: "s" }] },
      ],
    };
    placeBreakpoints(prompt, 10);
    expect(JSON.stringify(prompt.messages[1])).not.toContain("cache_control");
    expect(prompt.messages[0]?.content[0]?.cache_control).toEqual({ type: "ephemeral" });
  });

  it("leaves out a breakpoint whose prefix is below the minimum cacheable length", () => {
    const prompt: CacheablePrompt = { system: [text(10)], messages: loop(1) };
    expect(placeBreakpoints(prompt, 1_000_000)).toEqual([]);
    expect(marks(prompt)).toHaveLength(0);
    const small: CacheablePrompt = {
      system: [text(10)],
      messages: [{ role: "user", content: [text(2000)] }],
    };
    placeBreakpoints(small, 1024);
    expect(small.system?.[0]?.cache_control).toBeUndefined(); // ~15 tokens
    expect(small.messages[0]?.content[0]?.cache_control).toEqual({ type: "ephemeral" }); // ~2,500 tokens
  });

  it("places at most 4 breakpoints and uses the 1-hour TTL when asked", () => {
    for (let turns = 0; turns < 30; turns++) {
      const prompt: CacheablePrompt = { system: [text(400)], messages: loop(turns) };
      expect(placeBreakpoints(prompt, 1, "1h").length).toBeLessThanOrEqual(4);
      for (const block of marks(prompt))
        expect(block.cache_control).toEqual({ type: "ephemeral", ttl: "1h" });
    }
  });
});
