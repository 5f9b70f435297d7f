/**
 * Light validation of `POST /v1/responses` / WS `response.create` bodies with zod: only the
 * fields the simulator interprets are checked; everything else passes through untouched.
 * Failures become OpenAI-style 400 errors naming the offending parameter.
 */
import { z } from "zod";
import { invalidRequest } from "./errors.ts";
import type { JsonObject } from "./json.ts";

const optionalNullable = <T extends z.ZodType>(schema: T) => schema.nullable().optional();

/** Schema of the interpreted create parameters (loose: unknown keys kept). */
export const createParamsSchema = z.looseObject({
  model: optionalNullable(z.string()),
  input: optionalNullable(z.union([z.string(), z.array(z.unknown())])),
  instructions: optionalNullable(z.string()),
  previous_response_id: optionalNullable(z.string()),
  store: optionalNullable(z.boolean()),
  stream: optionalNullable(z.boolean()),
  background: optionalNullable(z.boolean()),
  tools: optionalNullable(z.array(z.looseObject({ type: z.string() }))),
  parallel_tool_calls: optionalNullable(z.boolean()),
  max_output_tokens: optionalNullable(z.number().int().min(1)),
  max_tool_calls: optionalNullable(z.number().int().min(1)),
  top_logprobs: optionalNullable(z.number().int().min(0).max(20)),
  presence_penalty: optionalNullable(z.number().min(-2).max(2)),
  frequency_penalty: optionalNullable(z.number().min(-2).max(2)),
  safety_identifier: optionalNullable(z.string()),
  prompt_cache_key: optionalNullable(z.string()),
  generate: optionalNullable(z.boolean()),
});

/** Validated create parameters. */
export type CreateParams = z.infer<typeof createParamsSchema>;

/** Validates `body`; throws a 400 SimError (`param` = first failing path) when invalid. */
export function parseCreateParams(body: JsonObject): CreateParams {
  const result = createParamsSchema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const param = issue ? issue.path.map(String).join(".") : null;
  throw invalidRequest(
    `Invalid value for '${param ?? "body"}': ${issue?.message ?? "invalid request"}.`,
    param,
  );
}
