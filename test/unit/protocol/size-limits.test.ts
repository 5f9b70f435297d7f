import { describe, expect, it } from "vitest";
import { ApiError } from "../../../src/protocol/errors.ts";
import {
  checkItemSize,
  checkSettingSizes,
  exceedsBytes,
  MAX_INSTRUCTIONS_BYTES,
  MAX_OTHER_SETTING_BYTES,
  MAX_TEXT_BYTES,
  MAX_TOOLS_BYTES,
  utf8Length,
} from "../../../src/protocol/size-limits.ts";

const utf8 = (text: string) => new TextEncoder().encode(text).byteLength;

function thrown(run: () => void): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("did not throw");
}

describe("size limits", () => {
  it("counts UTF-8 bytes as the encoder does, lone surrogates included", () => {
    for (const text of [
      "",
      "ascii",
      "café",
      "漢字",
      "😀🚀",
      "a\ud800b",
      "\udc00",
      "x\ud83d",
      "\ud83d\ude00\ud83d",
    ]) {
      expect(utf8Length(text), JSON.stringify(text)).toBe(utf8(text));
    }
  });

  it("decides cheaply when text is clearly under or over", () => {
    expect(exceedsBytes("漢".repeat(10), 30)).toBe(false);
    expect(exceedsBytes("漢".repeat(11), 30)).toBe(true);
    expect(exceedsBytes("x".repeat(31), 30)).toBe(true);
  });

  it("names the item over the limit", () => {
    const error = thrown(() => checkItemSize("x".repeat(17 * 1024 * 1024), 3));
    expect([error.status, error.code, error.param]).toEqual([400, "item_too_large", "input[3]"]);
  });

  it.each([
    ["instructions", "i".repeat(MAX_INSTRUCTIONS_BYTES + 1), "string_above_max_length"],
    ["instructions", "漢".repeat(MAX_INSTRUCTIONS_BYTES / 3 + 1), "string_above_max_length"],
    ["tools", [{ type: "function", description: "d".repeat(MAX_TOOLS_BYTES) }], "setting_too_large"],
    ["text", { format: { type: "json_schema", schema: "s".repeat(MAX_TEXT_BYTES) } }, "setting_too_large"],
    ["reasoning", { effort: "e".repeat(MAX_OTHER_SETTING_BYTES) }, "setting_too_large"],
    ["user", "u".repeat(MAX_OTHER_SETTING_BYTES + 1), "string_above_max_length"],
  ])("refuses %s over its limit", (name, value, code) => {
    const error = thrown(() => checkSettingSizes({ [name]: value }));
    expect([error.status, error.type, error.code, error.param]).toEqual([
      400,
      "invalid_request_error",
      code,
      name,
    ]);
  });

  it("accepts settings at their limits", () => {
    expect(() =>
      checkSettingSizes({
        instructions: "i".repeat(MAX_INSTRUCTIONS_BYTES),
        user: "u".repeat(MAX_OTHER_SETTING_BYTES),
        tools: null,
        text: undefined,
      }),
    ).not.toThrow();
  });
});
