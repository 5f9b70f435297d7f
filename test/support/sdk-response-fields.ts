/**
 * The fields the `openai` SDK's `Response` type (node_modules/openai/resources/responses/
 * responses.d.ts, `export interface Response`) declares as required, derived from the type at
 * compile time: `REQUIRED` must name exactly the required keys, so `npm run check` (tsc) fails
 * when an SDK upgrade adds or removes one. `output_text` is left out: the SDK computes it
 * client-side (`addOutputText`); the API does not send it.
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

/** Asserts that a raw (wire) Response object carries every field the SDK requires. */
export function expectSdkResponse(value: unknown, where: string): void {
  expect(typeof value, where).toBe("object");
  const missing = SDK_REQUIRED_RESPONSE_FIELDS.filter((field) => !(field in (value as object)));
  expect(missing, `${where}: fields the openai SDK's Response type requires`).toEqual([]);
  expect((value as { object?: unknown }).object, where).toBe("response");
}
