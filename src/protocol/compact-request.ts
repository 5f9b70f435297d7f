/**
 * The bodies of `POST /v1/responses/compact` and `POST /v1/responses/input_tokens`, as OpenAI
 * defines them (openai-node 7.59.0 `ResponseCompactParams`, `InputTokenCountParams`): validation at
 * the trust boundary into typed requests. Unknown fields are accepted and ignored (passed through
 * to an upstream that serves the endpoint), as for `POST /v1/responses` — except `conversation` on
 * compact, refused as OpenAI refuses it.
 * Source: https://platform.openai.com/docs/api-reference/responses/compact,
 *   https://platform.openai.com/docs/api-reference/responses/input-tokens
 */
import { z } from "zod";
import { inputItem } from "./items.ts";
import { openAIIssue } from "./openai-issue.ts";

const input = z.union([z.string(), z.array(inputItem)]).nullish();

/**
 * `conversation`, which OpenAI's compact does not take (its parameters: `model`, `input`,
 * `instructions`, `previous_response_id`, `prompt_cache_key` and cache options): refused as OpenAI
 * refuses an unknown parameter, rather than passed through like other unknown fields — it would
 * otherwise route the request to the conversation's session and compact without its items.
 * Source: https://developers.openai.com/api/reference/typescript/resources/beta/subresources/responses/methods/compact
 */
const noConversation = z
  .unknown()
  .optional()
  .superRefine((value, ctx) => {
    if (value !== undefined)
      ctx.addIssue(openAIIssue("Unknown parameter: 'conversation'.", "unknown_parameter"));
  });

/** `POST /v1/responses/compact`: `model` is required (400 without it); no `conversation`. */
export const compactRequest = z.looseObject({
  model: z
    .string({ error: "Missing required parameter: 'model'." })
    .min(1, "Missing required parameter: 'model'."),
  input,
  previous_response_id: z.string().min(1).nullish(),
  instructions: z.string().nullish(),
  prompt_cache_key: z.string().nullish(),
  conversation: noConversation,
});

/** A validated compact request. */
export type CompactRequest = z.infer<typeof compactRequest>;

/** `POST /v1/responses/input_tokens`: every field optional, as OpenAI's. */
export const inputTokensRequest = z.looseObject({
  model: z.string().min(1).nullish(),
  input,
  previous_response_id: z.string().min(1).nullish(),
  instructions: z.string().nullish(),
  tools: z.array(z.looseObject({ type: z.string().min(1) })).nullish(),
  conversation: z.unknown().optional(),
});

/** A validated input-token count request. */
export type InputTokensRequest = z.infer<typeof inputTokensRequest>;
