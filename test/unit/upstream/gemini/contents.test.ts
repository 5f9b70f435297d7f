/**
 * Responses context → Gemini request (src/upstream/gemini/contents.ts, request.ts,
 * thought-signatures.ts): roles and merging, instructions and leading system messages as
 * `systemInstruction`, function responses right after their calls in call order with the call's
 * name and Gemini's id (never a minted one), each reasoning item's signature restored on the part
 * after it byte-exact (another upstream's left out), and the settings mapping and refusals.
 */
import { describe, expect, it } from "vitest";
import type { Item, StoredItem } from "../../../../src/protocol/items.ts";
import { ORIGIN_FIELD } from "../../../../src/upstream/encrypted-reasoning.ts";
import { toGeminiConversation } from "../../../../src/upstream/gemini/contents.ts";
import { toGeminiRequest } from "../../../../src/upstream/gemini/request.ts";
import { openThoughts, sealThoughts } from "../../../../src/upstream/gemini/thought-signatures.ts";
import { newItemId } from "../../../../src/util/ids.ts";

const ORIGIN = "https://generativelanguage.test/v1beta";
const user = (content: string) => ({ type: "message", role: "user", content }) as Item;
const call = (callId: string, cmd: string) =>
  ({ type: "function_call", call_id: callId, name: "exec", arguments: JSON.stringify({ cmd }) }) as Item;
const output = (callId: string, text: string) =>
  ({ type: "function_call_output", call_id: callId, output: text }) as Item;
const reasoning = (next: string, origin = ORIGIN) =>
  ({
    type: "reasoning",
    summary: [],
    encrypted_content: sealThoughts({ parts: [], next }),
    [ORIGIN_FIELD]: origin,
  }) as unknown as Item;

describe("Gemini contents", () => {
  it("round-trips a thought state byte-exact and opens nothing else", () => {
    const state = { parts: [{ text: "hm ü", thought: true, thoughtSignature: "A/b+==" }], next: "Cg==" };
    expect(openThoughts(sealThoughts(state))).toEqual(state);
    expect(openThoughts("claude-thinking.v1.e30")).toBeNull();
    expect(openThoughts("gemini-thought.v1.!!")).toBeNull();
  });

  it("pairs responses with calls in call order, restores signatures, and never sends a minted id", () => {
    const minted = newItemId("function_call");
    const { system, contents } = toGeminiConversation(
      "Be brief.",
      [
        { type: "message", role: "developer", content: "Use tools." } as Item,
        user("go"),
        reasoning("sig-1"),
        call("g1", "a"),
        call("g2", "b"),
        output("g2", "B"),
        output("g1", "A"),
        reasoning("sig-2", "https://api.anthropic.test/v1"),
        reasoning("sig-3"),
        call(minted, "c"),
        output(minted, "C"),
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "done" }] } as Item,
      ],
      ORIGIN,
    );
    expect(system).toEqual(["Be brief.", "Use tools."]);
    expect(contents).toEqual([
      { role: "user", parts: [{ text: "go" }] },
      {
        role: "model",
        parts: [
          { functionCall: { id: "g1", name: "exec", args: { cmd: "a" } }, thoughtSignature: "sig-1" },
          { functionCall: { id: "g2", name: "exec", args: { cmd: "b" } } },
        ],
      },
      {
        role: "user",
        parts: [
          { functionResponse: { id: "g1", name: "exec", response: { output: "A" } } },
          { functionResponse: { id: "g2", name: "exec", response: { output: "B" } } },
        ],
      },
      {
        role: "model",
        parts: [{ functionCall: { name: "exec", args: { cmd: "c" } }, thoughtSignature: "sig-3" }],
      },
      { role: "user", parts: [{ functionResponse: { name: "exec", response: { output: "C" } } }] },
      { role: "model", parts: [{ text: "done" }] },
    ]);
  });

  it("maps the settings and refuses what Gemini cannot honour", () => {
    const base = {
      model: "gemini-3-pro",
      input: [user("hi")] as unknown as StoredItem[],
      newInput: [],
      previousResponseId: null,
      responseId: "r",
      sessionKey: "s",
    };
    const body = toGeminiRequest(
      {
        ...base,
        settings: {
          tools: [
            { type: "function", name: "exec", description: "d", parameters: { type: "object" } },
          ] as never,
          tool_choice: { type: "function", name: "exec" } as never,
          max_output_tokens: 500,
          temperature: 1.5,
          top_p: 0.9,
          reasoning: { effort: "xhigh", summary: "auto" } as never,
          text: { format: { type: "json_schema", name: "x", schema: { type: "object" } } } as never,
        },
      },
      ORIGIN,
    );
    expect(body).toMatchObject({
      tools: [
        {
          functionDeclarations: [
            { name: "exec", description: "d", parametersJsonSchema: { type: "object" } },
          ],
        },
      ],
      toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["exec"] } },
      generationConfig: {
        maxOutputTokens: 500,
        temperature: 1.5,
        topP: 0.9,
        thinkingConfig: { thinkingLevel: "high", includeThoughts: true },
        responseMimeType: "application/json",
        responseJsonSchema: { type: "object" },
      },
    });
    const budget = toGeminiRequest(
      { ...base, model: "gemini-2.5-flash", settings: { reasoning: { effort: "none" } as never } },
      ORIGIN,
    );
    expect(budget.generationConfig?.thinkingConfig).toEqual({ thinkingBudget: 0 });
    for (const [settings, param] of [
      [{ top_logprobs: 2 }, "top_logprobs"],
      [{ max_tool_calls: 3 }, "max_tool_calls"],
      [{ temperature: 2.5 }, "temperature"],
      [{ tools: [{ type: "web_search" }] }, "tools[0]"],
      [{ include: ["message.output_text.logprobs"] }, "include"],
    ] as const) {
      expect(() => toGeminiRequest({ ...base, settings: settings as never }, ORIGIN)).toThrow(
        expect.objectContaining({ status: 400, param }),
      );
    }
    expect(() =>
      toGeminiConversation(
        null,
        [
          {
            type: "message",
            role: "user",
            content: [{ type: "input_image", image_url: "https://x/y.png" }],
          } as Item,
        ],
        ORIGIN,
      ),
    ).toThrow(expect.objectContaining({ status: 400, code: "unsupported_content" }));
  });
});
