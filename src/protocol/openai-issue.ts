/**
 * A zod issue that carries OpenAI's exact error `message` and `code`, for checks whose wording
 * OpenAI fixes (unsupported item types, `metadata` caps). `zodToApiError` (client-events.ts)
 * reports such an issue as is, with `param` the path (`input[2]`, `metadata.key`).
 * Owns the convention between schemas and the error mapper.
 */

/** What `params` holds on such an issue. */
export interface OpenAIIssueParams {
  openai: { message: string; code: string };
}

/** The issue to pass to `ctx.addIssue`. */
export function openAIIssue(
  message: string,
  code: string,
  path: PropertyKey[] = [],
): { code: "custom"; message: string; path: PropertyKey[]; params: OpenAIIssueParams } {
  return { code: "custom", message, path, params: { openai: { message, code } } };
}

/** The OpenAI error carried by an issue's `params`, or null. */
export function openAIErrorOf(params: unknown): { message: string; code: string } | null {
  if (typeof params !== "object" || params === null || !Object.hasOwn(params, "openai")) return null;
  const openai = (params as { openai: unknown }).openai;
  if (typeof openai !== "object" || openai === null) return null;
  const { message, code } = openai as { message?: unknown; code?: unknown };
  return typeof message === "string" && typeof code === "string" ? { message, code } : null;
}
