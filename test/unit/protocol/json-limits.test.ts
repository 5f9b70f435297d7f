/**
 * The nesting-depth limit on client JSON (src/protocol/json-limits.ts, issue #10 item 5): checked
 * on the text, iteratively, naming the field; agrees with the depth of the parsed value.
 */
import { describe, expect, it } from "vitest";
import { ApiError } from "../../../src/protocol/errors.ts";
import { jsonDepthExceeded, MAX_JSON_DEPTH, parseClientJson } from "../../../src/protocol/json-limits.ts";

const nested = (levels: number, open = "[", close = "]", inner = "1") =>
  `${open.repeat(levels)}${inner}${close.repeat(levels)}`;

/** Depth of a parsed value, walked with an explicit stack (the reference for the scan). */
function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, d] = stack.pop() as [unknown, number];
    if (typeof v !== "object" || v === null) continue;
    deepest = Math.max(deepest, d);
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return deepest;
}

function errorOf(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("expected an ApiError");
}

describe("jsonDepthExceeded", () => {
  it("accepts exactly MAX_JSON_DEPTH levels and refuses one more", () => {
    expect(jsonDepthExceeded(nested(MAX_JSON_DEPTH))).toBeNull();
    expect(jsonDepthExceeded(nested(MAX_JSON_DEPTH + 1))).toBe("[0][0][0]");
  });

  it("names the field holding the deep value", () => {
    const deep = nested(100);
    expect(jsonDepthExceeded(`{"model":"m","tool_choice":${deep}}`)).toBe("tool_choice[0][0]");
    expect(jsonDepthExceeded(`{"text":{"format":${nested(100, '{"a":', "}")}}}`)).toBe("text.format.a");
    const input = `{"input":[{"type":"message"},{"x":1},{"type":"function_call_output","output":${deep}}]}`;
    expect(jsonDepthExceeded(input)).toBe("input[2].output");
  });

  it("ignores brackets and escaped quotes inside strings, and reads escaped keys", () => {
    const text = `{"a":"[[[[{{{{\\"[[[[","b\\"c":[${"[".repeat(70)}]}`;
    expect(jsonDepthExceeded(`{"a":"${"[".repeat(1000)}"}`)).toBeNull();
    expect(jsonDepthExceeded(text)).toBe('b"c[0][0]');
  });

  it("ends a string at the first quote after an even run of backslashes", () => {
    const deep = "[".repeat(70);
    // "x\\" is x and one backslash: its closing quote follows two backslashes.
    expect(jsonDepthExceeded(`{"a":"x\\\\","b":${deep}}`)).toBe("b[0][0]");
    // "\\\"[[[" holds an escaped backslash and an escaped quote: the brackets are text.
    expect(jsonDepthExceeded(`{"a":"\\\\\\"${deep}","b":1}`)).toBeNull();
    expect(jsonDepthExceeded(`{"a":"unterminated ${deep}`)).toBeNull();
  });

  it("scans a million levels without recursion", () => {
    const text = "[".repeat(1_000_000); // unclosed, too: parsing would report that later
    expect(jsonDepthExceeded(text)).toBe("[0][0][0]");
    expect(jsonDepthExceeded(`{"k":${nested(1_000_000)}}`)).toBe("k[0][0]");
  });

  it("agrees with the depth of the parsed value on random JSON", () => {
    let seed = 7;
    const random = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    // A random spine of containers with a few short siblings per level (linear size).
    const build = (depth: number): unknown => {
      if (depth === 0) return random() < 0.5 ? 's[{"}]\\' : 3;
      const child = build(depth - 1);
      const siblings = Array.from({ length: Math.floor(random() * 3) }, () => (random() < 0.5 ? [] : "x]"));
      const members = random() < 0.5 ? [...siblings, child] : [child, ...siblings];
      if (random() < 0.5) return members;
      return Object.fromEntries(members.map((member, i) => [`k${i}{[`, member]));
    };
    for (let sample = 0; sample < 300; sample++) {
      const value = build(Math.floor(random() * 90));
      const limit = 1 + Math.floor(random() * 80);
      const text = JSON.stringify(value);
      expect(jsonDepthExceeded(text, limit) === null, text.slice(0, 80)).toBe(depthOf(value) <= limit);
    }
  });
});

describe("parseClientJson", () => {
  it("parses JSON within the limit", () => {
    expect(parseClientJson('{"a":[1,{"b":null}]}')).toEqual({ a: [1, { b: null }] });
  });

  it("refuses deep JSON with a 400 naming the field", () => {
    const error = errorOf(() => parseClientJson(`{"tool_choice":${nested(10_000)}}`));
    expect(error.status).toBe(400);
    expect(error.toBody()).toEqual({
      type: "invalid_request_error",
      code: "invalid_value",
      param: "tool_choice[0][0]",
      message: `Invalid value for 'tool_choice[0][0]': JSON nested deeper than ${MAX_JSON_DEPTH} levels is not accepted.`,
    });
  });

  it("refuses text that is not JSON with invalid_json", () => {
    expect(errorOf(() => parseClientJson("{nope")).code).toBe("invalid_json");
    expect(errorOf(() => parseClientJson("{nope", "frame")).message).toBe("The frame is not valid JSON.");
  });
});
