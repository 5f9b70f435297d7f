/**
 * The errors safety checks report, in OpenAI's envelope (src/protocol/errors.ts):
 * - `moderation_blocked` (400, `invalid_request_error`): the input was flagged and the policy
 *   blocks; the code is the one OpenAI uses for content its moderation blocked (the openai SDK's
 *   `moderation_details` of a `moderation_blocked` error). Nothing was stored or generated.
 * - `safety_unavailable` (503, `server_error`): the classifier errored, timed out or answered
 *   something unusable and the policy fails closed. Never reported as "flagged".
 * Invariant: messages name categories and reasons, never the classified content or a key.
 */
import { ApiError } from "../protocol/errors.ts";
import type { ClassifierUnavailable } from "./classifier.ts";

/** 400 `moderation_blocked`: the request's input was flagged. */
export function moderationBlocked(categories: readonly string[]): ApiError {
  const which = categories.length > 0 ? ` (${categories.join(", ")})` : "";
  return new ApiError(400, {
    type: "invalid_request_error",
    code: "moderation_blocked",
    message: `The input was flagged by Deltagate's safety checks${which}; nothing was generated.`,
    param: "input",
  });
}

/** 503 `safety_unavailable`: the input could not be checked and the policy fails closed. */
export function safetyUnavailable(failure: ClassifierUnavailable): ApiError {
  return new ApiError(503, {
    type: "server_error",
    code: "safety_unavailable",
    message: `Deltagate's safety checks are unavailable (${failure.message}); nothing was generated. Retry later.`,
    param: null,
  });
}
