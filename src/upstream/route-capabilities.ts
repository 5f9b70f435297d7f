/**
 * What each wire API can serve of a turn's settings. Owns the refusal of a parameter or tool type
 * a model's routes cannot serve, before anything is stored or sent (README "Create parameters:
 * where each one goes").
 * Invariant: a setting the Chat Completions adapter (chat/request.ts) has no mapping for, and that
 * changes what the model does, is refused here rather than dropped there: `prompt` (a template
 * only OpenAI's Responses API holds), `image`, and every tool but `function`. Responses routes
 * (`responses-http`, `responses-ws`) get every setting as sent.
 * Sources: https://platform.openai.com/docs/api-reference/responses/create,
 *   https://platform.openai.com/docs/api-reference/chat/create (`tools[].type`: `function` and
 *   `custom`; Deltagate's adapter maps `function` only)
 */
import type { TurnSettings } from "../protocol/create-request.ts";
import { invalidRequest } from "../protocol/errors.ts";
import { isRecord } from "../protocol/json.ts";
import type { UpstreamApi } from "./routes.ts";

/** The wire APIs' names as a client reads them in an error. */
const API_NAMES: Record<UpstreamApi, string> = {
  "responses-http": "the Responses API",
  "responses-ws": "the Responses API (WebSocket mode)",
  "chat-completions": "Chat Completions",
};

/** Settings a Chat Completions route cannot serve (no equivalent there). */
export const CHAT_UNSERVABLE_SETTINGS = [
  "prompt",
  "image",
] as const satisfies readonly (keyof TurnSettings)[];

/** The tool types a Chat Completions route serves (chat/request.ts `toChatTools`). */
export const CHAT_TOOL_TYPES: ReadonlySet<string> = new Set(["function"]);

/**
 * Refuses what a route of `api` cannot serve of `settings`.
 * @param model the client's model id, named in the message.
 * @throws {ApiError} 400 `unsupported_parameter` (`param`: the setting) or `unsupported_value`
 *   (`param: "tools[i].type"`) for the first setting or tool the route cannot serve.
 */
export function refuseUnservable(api: UpstreamApi, model: string, settings: Partial<TurnSettings>): void {
  if (api !== "chat-completions") return;
  const served = API_NAMES[api];
  for (const name of CHAT_UNSERVABLE_SETTINGS) {
    if (settings[name] === undefined || settings[name] === null) continue;
    throw invalidRequest(
      `Unsupported parameter: '${name}' is not supported with model '${model}', which is served over ${served}.`,
      name,
      "unsupported_parameter",
    );
  }
  (settings.tools ?? []).forEach((tool, index) => {
    const type = isRecord(tool) && typeof tool.type === "string" ? tool.type : "";
    if (CHAT_TOOL_TYPES.has(type)) return;
    throw invalidRequest(
      `Unsupported value: tool type '${type}' is not supported with model '${model}', which is served over ${served}. Supported values are: 'function'.`,
      `tools[${index}].type`,
      "unsupported_value",
    );
  });
}
