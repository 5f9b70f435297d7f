/**
 * Checks a response's server events the way a client would: with the `openai` SDK's own stream
 * accumulator. Runtime-neutral (Node and workerd), so unit tests outside workerd share it.
 */
import { ResponseStream } from "openai/lib/responses/ResponseStream";
import type { Response as OpenAIResponse } from "openai/resources/responses/responses";
import { expect } from "vitest";

/** A frame received from Deltagate. */
export type Frame = { type: string; sequence_number?: number; stream_id?: string; [k: string]: unknown };

/**
 * Checks one response's events: `sequence_number` contiguous from 0, and the `openai` SDK's
 * accumulator rebuilds them without error. Returns the SDK's final Response.
 */
export async function validateWithSdk(frames: Frame[]): Promise<OpenAIResponse> {
  expect(frames.map((f) => f.sequence_number)).toEqual(frames.map((_, i) => i));
  const body = frames.map((f) => `${JSON.stringify(f)}\n`).join("");
  const stream = new Response(body).body!;
  const final = await ResponseStream.fromReadableStream(stream).finalResponse();
  return final as OpenAIResponse;
}
