/**
 * The fields the `openai` SDK's `Response` type (node_modules/openai/resources/responses/
 * responses.d.ts, `export interface Response`) declares as required, derived from the type at
 * compile time: `REQUIRED` must name exactly the required keys, so `npm run check` (tsc) fails
 * when an SDK upgrade adds or removes one. `output_text` is left out: the SDK computes it
 * client-side (`addOutputText`); the API does not send it.
 * Also the fields the Open Responses specification's `ResponseResource` requires, with their
 * types (https://www.openresponses.org/reference), and its function tool's `description`,
 * `parameters` and `strict` (each present, possibly null).
 */
import type { Response as SdkResponse } from "openai/resources/responses/responses";
import { expect } from "vitest";

/** Keys of `T` that are not optional. */
type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];

const REQUIRED: Record<Exclude<RequiredKeys<SdkResponse>, "output_text">, true> = {
  id: true,
  access_programs: true,
  created_at: true,
  error: true,
  incomplete_details: true,
  instructions: true,
  metadata: true,
  model: true,
  object: true,
  output: true,
  parallel_tool_calls: true,
  temperature: true,
  tool_choice: true,
  tools: true,
  top_p: true,
};

/** The SDK's required Response fields that the API sends. */
export const SDK_REQUIRED_RESPONSE_FIELDS: readonly string[] = Object.keys(REQUIRED);

/** `ResponseResource`'s required fields (Open Responses), each with the JSON types it may have. */
export const OPEN_RESPONSES_REQUIRED_FIELDS: Readonly<Record<string, readonly string[]>> = {
  id: ["string"],
  object: ["string"],
  created_at: ["integer"],
  completed_at: ["integer", "null"],
  status: ["string"],
  incomplete_details: ["object", "null"],
  model: ["string"],
  previous_response_id: ["string", "null"],
  instructions: ["string", "null"],
  output: ["array"],
  error: ["object", "null"],
  tools: ["array"],
  tool_choice: ["string", "object"],
  truncation: ["string"],
  parallel_tool_calls: ["boolean"],
  text: ["object"],
  top_p: ["number"],
  presence_penalty: ["number"],
  frequency_penalty: ["number"],
  top_logprobs: ["integer"],
  temperature: ["number"],
  reasoning: ["object", "null"],
  usage: ["object", "null"],
  max_output_tokens: ["integer", "null"],
  max_tool_calls: ["integer", "null"],
  store: ["boolean"],
  background: ["boolean"],
  service_tier: ["string"],
  metadata: ["object", "null"],
  safety_identifier: ["string", "null"],
  prompt_cache_key: ["string", "null"],
};

function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

/** Asserts that a raw Response object carries every field `ResponseResource` requires, well typed. */
export function expectOpenResponsesResource(value: unknown, where: string): void {
  const response = value as Record<string, unknown>;
  const wrong = Object.entries(OPEN_RESPONSES_REQUIRED_FIELDS).filter(([field, types]) => {
    if (!(field in response)) return true;
    const type = jsonType(response[field]);
    return !types.includes(type) && !(type === "integer" && types.includes("number"));
  });
  expect(
    wrong.map(([field]) => `${field}: ${field in response ? jsonType(response[field]) : "missing"}`),
    `${where}: ResponseResource fields`,
  ).toEqual([]);
  for (const tool of (response.tools as Array<Record<string, unknown>>) ?? []) {
    if (tool.type !== "function") continue;
    for (const field of ["description", "parameters", "strict"]) {
      expect(field in tool, `${where}: function tool ${String(tool.name)} has ${field}`).toBe(true);
    }
    expect([true, false, null], `${where}: strict`).toContain(tool.strict);
  }
}

/** Asserts that a raw (wire) Response object carries every field the SDK requires. */
export function expectSdkResponse(value: unknown, where: string): void {
  expect(typeof value, where).toBe("object");
  const missing = SDK_REQUIRED_RESPONSE_FIELDS.filter((field) => !(field in (value as object)));
  expect(missing, `${where}: fields the openai SDK's Response type requires`).toEqual([]);
  expect((value as { object?: unknown }).object, where).toBe("response");
  expectOpenResponsesResource(value, where);
}
