/**
 * The pieces of src/context on their own, in Node (test/workers/context-*.test.ts run the same
 * tokenizer inside workerd, where it runs in production): real o200k_base counts, item estimates
 * and their byte bound, the instructions/tools memo, turn segmentation and fitting for
 * `truncation`, and the usage fallback on an upstream stream.
 */
import { describe, expect, it } from "vitest";
import {
  IMAGE_TOKENS,
  ITEM_FRAMING_TOKENS,
  itemTokens,
  LOW_DETAIL_IMAGE_TOKENS,
  SettingsTokenMemo,
  tokenBound,
  utf8Length,
} from "../../../src/context/item-tokens.ts";
import { loadTokenizer } from "../../../src/context/tokenizer.ts";
import { fitStart, turnStarts } from "../../../src/context/truncation.ts";
import { reportedHistoryTokens, withUsageFallback } from "../../../src/context/usage.ts";
import { ApiError } from "../../../src/protocol/errors.ts";
import type { Item } from "../../../src/protocol/items.ts";
import type { UpstreamEvent, UpstreamStream } from "../../../src/upstream/upstream.ts";

const user = (text: string): Item => ({ type: "message", role: "user", content: text });
const assistant = (text: string): Item => ({
  type: "message",
  role: "assistant",
  content: [{ type: "output_text", text }],
});
const call = (id: string): Item => ({ type: "function_call", call_id: id, name: "exec", arguments: "{}" });
const output = (id: string): Item => ({ type: "function_call_output", call_id: id, output: "ok" });

describe("tokenizer", () => {
  it("counts o200k_base tokens, special-token strings as plain text", async () => {
    const count = await loadTokenizer();
    expect(count("")).toBe(0);
    expect(count("Hello, world!")).toBe(4);
    expect(count("Hello, world! <|endoftext|> 你好😀")).toBe(14);
  });
});

describe("item tokens", () => {
  it("counts the text the model reads plus framing, images at their tile cost", async () => {
    const count = await loadTokenizer();
    const text = "The quick brown fox jumps over the lazy dog.";
    expect(itemTokens(user(text), count)).toBe(ITEM_FRAMING_TOKENS + count("user") + count(text));
    expect(itemTokens(call("c1"), count)).toBe(ITEM_FRAMING_TOKENS + count("exec") + count("{}"));
    const image: Item = {
      type: "message",
      role: "user",
      content: [
        { type: "input_image", image_url: "https://x.test/a.png", detail: "low" },
        { type: "input_image", image_url: "https://x.test/b.png" },
      ],
    };
    expect(itemTokens(image, count)).toBe(
      ITEM_FRAMING_TOKENS + count("user") + LOW_DETAIL_IMAGE_TOKENS + IMAGE_TOKENS,
    );
  });

  it("bounds every count from above by the item's JSON bytes (plus images)", async () => {
    const count = await loadTokenizer();
    const items: Item[] = [
      user("hi"),
      user("日本語のテキスト😀 and ascii"),
      assistant("x".repeat(500)),
      call("c1"),
      output("c1"),
      { type: "reasoning", summary: [{ type: "summary_text", text: "thinking" }] },
      { type: "custom_tool_call", call_id: "c2", name: "apply_patch", input: "*** Begin Patch" },
      { type: "message", role: "user", content: [{ type: "input_image", image_url: "u" }] },
    ];
    for (const item of items) {
      const stored = { ...item, id: "item_1" };
      const bound = tokenBound(stored, utf8Length(JSON.stringify(stored)));
      expect(bound).toBeGreaterThanOrEqual(itemTokens(stored, count));
    }
  });

  it("measures UTF-8 like TextEncoder", () => {
    for (const text of ["", "abc", "é", "日本", "😀x", "a\ud800b"]) {
      expect(utf8Length(text)).toBe(new TextEncoder().encode(text).length);
    }
  });

  it("counts instructions and tools once per text, and bounds them by bytes before", async () => {
    const count = await loadTokenizer();
    const memo = new SettingsTokenMemo();
    const tools = [{ type: "function", name: "exec" }];
    const bound = memo.tokens("Be brief.", tools);
    expect(bound).toBe(ITEM_FRAMING_TOKENS + utf8Length("Be brief.") + utf8Length(JSON.stringify(tools)));
    let calls = 0;
    const counting = (text: string) => {
      calls++;
      return count(text);
    };
    const exact = memo.tokens("Be brief.", tools, counting);
    expect(exact).toBe(ITEM_FRAMING_TOKENS + count("Be brief.") + count(JSON.stringify(tools)));
    expect(memo.tokens("Be brief.", tools, counting)).toBe(exact);
    expect(memo.tokens("Be brief.", tools)).toBe(exact); // known now, no bound needed
    expect(calls).toBe(2);
  });
});

describe("truncation", () => {
  it("starts turns at user messages, not while a tool call is unanswered", () => {
    const items = [user("a"), assistant("b"), user("c"), call("x"), user("d"), output("x"), user("e")];
    expect(turnStarts(items)).toEqual([0, 2, 6]);
  });

  it("keeps everything when it fits, drops the fewest whole turns in auto, rejects in disabled", () => {
    const items = [user("a"), assistant("b"), user("c"), assistant("d"), user("e")];
    const tokens = [10, 10, 10, 10, 10];
    expect(fitStart(items, tokens, 4, 50, "disabled")).toBe(0);
    expect(() => fitStart(items, tokens, 4, 49, "disabled")).toThrow(ApiError);
    expect(fitStart(items, tokens, 4, 49, "auto")).toBe(2);
    expect(fitStart(items, tokens, 4, 10, "auto")).toBe(4);
    expect(() => fitStart(items, tokens, 4, 9, "auto")).toThrow("exceeds the context window");
  });

  it("never drops the turn holding the current input, even when it starts in history", () => {
    const items = [user("a"), assistant("b"), user("c"), call("x"), output("x")];
    const tokens = [10, 10, 10, 10, 10];
    // The input is the function_call_output (index 4); its turn starts at the user message 2.
    expect(fitStart(items, tokens, 4, 30, "auto")).toBe(2);
    expect(() => fitStart(items, tokens, 4, 29, "auto")).toThrow(ApiError);
  });
});

function streamOf(events: UpstreamEvent[]): UpstreamStream {
  const [first, ...rest] = events;
  return {
    first: first!,
    rest: {
      async *[Symbol.asyncIterator]() {
        yield* rest;
      },
    },
  };
}

async function drain(stream: UpstreamStream): Promise<UpstreamEvent[]> {
  const events = [stream.first];
  for await (const event of stream.rest) events.push(event);
  return events;
}

describe("usage fallback", () => {
  const item = { type: "message", role: "assistant", content: [{ type: "output_text", text: "Done." }] };

  it("fills a missing usage from the counts of what was sent and of the output", async () => {
    const count = await loadTokenizer();
    let asked = 0;
    const stream = await withUsageFallback(
      streamOf([
        { type: "response.created", response: {} },
        { type: "response.output_item.done", output_index: 0, item },
        { type: "response.completed", response: { id: "r", output: [item], usage: null } },
      ]),
      async () => {
        asked++;
        return { count, inputTokens: 42 };
      },
    );
    const events = await drain(stream);
    const outputTokens = itemTokens(item as Item, count);
    expect(events.at(-1)).toMatchObject({
      type: "response.completed",
      response: {
        id: "r",
        usage: { input_tokens: 42, output_tokens: outputTokens, total_tokens: 42 + outputTokens },
      },
    });
    expect(asked).toBe(1);
  });

  it("keeps an upstream's own usage and leaves failed responses alone", async () => {
    const usage = { input_tokens: 1, output_tokens: 2, total_tokens: 3 };
    const never = async (): Promise<never> => {
      throw new Error("must not count");
    };
    const events = await drain(
      await withUsageFallback(
        streamOf([
          { type: "response.created", response: {} },
          { type: "response.completed", response: { usage } },
        ]),
        never,
      ),
    );
    expect(events.at(-1)).toEqual({ type: "response.completed", response: { usage } });
    const failed = await drain(
      await withUsageFallback(streamOf([{ type: "response.failed", response: { usage: null } }]), never),
    );
    expect(failed[0]).toEqual({ type: "response.failed", response: { usage: null } });
  });
});

describe("reportedHistoryTokens", () => {
  const usage = { input_tokens: 1_000, output_tokens: 50 };
  it("is the previous response's input plus output tokens when it finished on a whole context", () => {
    expect(reportedHistoryTokens({ status: "completed", usage, settings: {} })).toBe(1_050);
    expect(reportedHistoryTokens({ status: "incomplete", usage, settings: { truncation: "disabled" } })).toBe(
      1_050,
    );
  });

  it("is unknown without a parent, for a response that did not finish, ran no inference or may have been truncated", () => {
    expect(reportedHistoryTokens(null)).toBeNull();
    expect(reportedHistoryTokens({ status: "failed", usage, settings: {} })).toBeNull();
    expect(reportedHistoryTokens({ status: "cancelled", usage, settings: {} })).toBeNull();
    expect(reportedHistoryTokens({ status: "completed", usage: null, settings: {} })).toBeNull();
    expect(
      reportedHistoryTokens({
        status: "completed",
        usage: { input_tokens: 0, output_tokens: 0 },
        settings: {},
      }),
    ).toBeNull();
    expect(
      reportedHistoryTokens({ status: "completed", usage, settings: { truncation: "auto" } }),
    ).toBeNull();
    expect(
      reportedHistoryTokens({
        status: "completed",
        usage: { input_tokens: "9", output_tokens: 1 },
        settings: {},
      }),
    ).toBeNull();
  });
});
