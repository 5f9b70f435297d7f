/**
 * Hostile shapes at the frame boundary (src/protocol/client-events.ts, issue #10 item 5): deep
 * nesting, item types named after `Object.prototype` members, and OpenAI's `metadata` caps all
 * become 400s with OpenAI's shape — never an exception of another kind.
 */
import { describe, expect, it } from "vitest";
import { parseClientFrame } from "../../../src/protocol/client-events.ts";
import { METADATA_LIMITS } from "../../../src/protocol/create-request.ts";
import { ApiError, type ErrorBody } from "../../../src/protocol/errors.ts";
import { INPUT_ITEM_TYPES } from "../../../src/protocol/items.ts";
import { newItemId } from "../../../src/util/ids.ts";

function create(fields: Record<string, unknown>): string {
  return JSON.stringify({ type: "response.create", model: "m", input: "hi", ...fields });
}

/** The `error` body of a frame that must be refused (any other throw fails the test). */
function refusal(frame: string): ErrorBody & { status: number } {
  try {
    parseClientFrame(frame);
  } catch (error) {
    if (error instanceof ApiError) return { status: error.status, ...error.toBody() };
    throw error;
  }
  throw new Error("the frame was accepted");
}

const deep = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;
const PROTOTYPE_NAMES = [
  "constructor",
  "__proto__",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "isPrototypeOf",
];

describe("parseClientFrame: structural limits", () => {
  it.each([
    [
      "tool_choice",
      `{"type":"response.create","model":"m","tool_choice":${deep(10_000)}}`,
      "tool_choice[0][0]",
    ],
    ["text", `{"type":"response.create","model":"m","text":{"format":${deep(10_000)}}}`, "text.format[0]"],
    [
      "an item field",
      `{"type":"response.create","model":"m","input":[{"type":"function_call_output","call_id":"c","output":${deep(10_000)}}]}`,
      "input[0].output",
    ],
  ])("refuses 10,000 levels in %s with a 400 naming it", (_, frame, param) => {
    const error = refusal(frame);
    expect(error).toMatchObject({ status: 400, type: "invalid_request_error", code: "invalid_value" });
    expect(error.param).toBe(param);
  });

  it.each(PROTOTYPE_NAMES)("refuses an item of type '%s' as OpenAI refuses an unknown type", (type) => {
    const error = refusal(create({ input: [{ type, role: "user", content: "x" }] }));
    expect(error).toMatchObject({
      status: 400,
      type: "invalid_request_error",
      code: "invalid_value",
      param: "input[0]",
    });
    expect(error.message).toMatch(
      new RegExp(`^Invalid value: '${type}'\\. Supported values are: 'additional_tools', `),
    );
  });

  it("still accepts every item type OpenAI accepts (opaque ones pass through)", () => {
    const items = [...INPUT_ITEM_TYPES].map((type) =>
      type === "message"
        ? { type, role: "user", content: "x" }
        : type === "function_call"
          ? { type, call_id: "c", name: "f", arguments: "{}" }
          : type === "function_call_output"
            ? { type, call_id: "c", output: "o" }
            : type === "item_reference"
              ? { type, id: "msg_1" }
              : { type, summary: [] },
    );
    const event = parseClientFrame(create({ input: items }));
    expect(event.type === "response.create" && event.request.input).toHaveLength(INPUT_ITEM_TYPES.size);
  });

  it("gives items of prototype-named types no prototype-derived id", () => {
    for (const type of PROTOTYPE_NAMES) expect(newItemId(type)).toMatch(/^item_[A-Za-z0-9_-]+$/);
  });

  it("accepts metadata at OpenAI's caps", () => {
    const metadata = Object.fromEntries(
      Array.from({ length: METADATA_LIMITS.keys }, (_, i) => [`${i}`.padEnd(64, "k"), "v".repeat(512)]),
    );
    metadata["0".padEnd(64, "k")] = "🎉".repeat(512); // characters, not UTF-16 units
    expect(parseClientFrame(create({ metadata })).type).toBe("response.create");
  });

  it("refuses a 17th metadata key with OpenAI's error", () => {
    const metadata = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"]));
    expect(refusal(create({ metadata }))).toEqual({
      status: 400,
      type: "invalid_request_error",
      code: "object_above_max_properties",
      param: "metadata",
      message:
        "Invalid 'metadata': too many properties. Expected an object with at most 16 properties, but got an object with 17 properties instead.",
    });
  });

  it("refuses a metadata key over 64 characters", () => {
    const error = refusal(create({ metadata: { ["k".repeat(65)]: "v" } }));
    expect(error).toMatchObject({ status: 400, code: "string_above_max_length", param: "metadata" });
  });

  it("refuses a metadata value over 512 characters with OpenAI's error", () => {
    expect(refusal(create({ metadata: { note: "v".repeat(513) } }))).toEqual({
      status: 400,
      type: "invalid_request_error",
      code: "string_above_max_length",
      param: "metadata.note",
      message:
        "Invalid 'metadata.note': string too long. Expected a string with maximum length 512, but got a string with length 513 instead.",
    });
  });

  it("refuses a non-string metadata value", () => {
    expect(refusal(create({ metadata: { n: 1 } }))).toMatchObject({ status: 400, param: "metadata.n" });
  });
});
