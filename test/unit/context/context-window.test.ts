/**
 * When the context window counts tokens (src/context/context-window.ts `fit`): only when the
 * context's bound may not fit, and that bound uses the exact counts made so far — so a chain whose
 * byte bound outgrew the window is counted once, not again for every turn's new input — or the
 * history's size as the upstream reported it, when that is known.
 */
import { describe, expect, it } from "vitest";
import { ContextWindow } from "../../../src/context/context-window.ts";
import { EMPTY_CONTEXT, turnContext } from "../../../src/context/counted-context.ts";
import type { StoredItem } from "../../../src/protocol/items.ts";
import type { ConversationStore, ItemTokenCount } from "../../../src/store/conversation-store.ts";
import type { Upstream } from "../../../src/upstream/upstream.ts";

/** ASCII prose: about 5 bytes per token, so its byte bound is far above its count. */
const prose = (n: number) => Array.from({ length: n }, (_, i) => `word${i % 10}`).join(" ");
const user = (id: string, text: string): StoredItem =>
  ({ type: "message", id, role: "user", content: text }) as StoredItem;

describe("ContextWindow.fit", () => {
  it("counts a chain once its bound outgrows the window, then only when it may not fit", async () => {
    const counted: ItemTokenCount[][] = [];
    const store = {
      historyEpoch: 0,
      setItemTokens: (updates: ItemTokenCount[]) => void counted.push(updates),
    } as unknown as ConversationStore;
    const window = new ContextWindow(store);
    const upstream: Upstream = { contextWindow: 2_000, open: () => Promise.reject(new Error("unused")) };
    const request = { instructions: null, tools: null, truncation: "disabled" as const };

    // Turn 1: ~3,000 bytes of history (~600 tokens) in a 2,000-token window: the bound may not fit.
    const first = turnContext("resp_1", EMPTY_CONTEXT, [user("msg_1", prose(600))]);
    await window.fit(upstream, { responseId: "resp_1", context: first, request });
    expect(counted.map((u) => u.length)).toEqual([1]);

    // Turn 2 continues it with a short input: exact history + the input's bound fits, no count.
    // history(resp_1) as the render cache keeps it: turn 1's context, built before it was counted.
    const history = first.all;
    const second = turnContext("resp_2", history, [user("msg_2", "next")]);
    expect(second.all.bound).toBeGreaterThan(2_000); // the bound as built still holds the bytes
    await window.fit(upstream, { responseId: "resp_2", context: second, request });
    expect(counted.map((u) => u.length)).toEqual([1]);
    expect(second.input[0]?.tokens).toBeNull();
  });

  it("takes the upstream's report of the history instead of counting it, unless even that may not fit", async () => {
    const counted: ItemTokenCount[][] = [];
    const store = {
      historyEpoch: 0,
      setItemTokens: (updates: ItemTokenCount[]) => void counted.push(updates),
    } as unknown as ConversationStore;
    const window = new ContextWindow(store);
    const upstream: Upstream = { contextWindow: 2_000, open: () => Promise.reject(new Error("unused")) };
    const request = { instructions: null, tools: null, truncation: "disabled" as const };
    const history = turnContext("resp_0", EMPTY_CONTEXT, [user("msg_0", prose(600))]).all;

    // ~3,000 bytes of history never counted, reported as 700 tokens: the bound fits, no count.
    const reported = turnContext("resp_1", history, [user("msg_1", "next")], 700);
    await window.fit(upstream, { responseId: "resp_1", context: reported, request });
    expect(counted).toEqual([]);

    // Reported as 1,990 tokens: with the new input it may not fit, so everything is counted.
    const near = turnContext("resp_2", history, [user("msg_2", "next")], 1_990);
    await window.fit(upstream, { responseId: "resp_2", context: near, request });
    expect(counted.map((u) => u.length)).toEqual([2]);
  });
});
