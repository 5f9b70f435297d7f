/**
 * What each wire API can serve of a turn's settings: the tool types it takes and the settings it
 * has no equivalent for. Owns `ROUTE_CAPABILITIES` and `capabilityRefusal`, the 400 a route's
 * adapter answers through `Upstream.refusal` (asked before the turn is accepted:
 * src/pipeline/pipeline.ts; fallback routes that would refuse a turn are skipped:
 * src/upstream/fallback.ts).
 * Invariant: a setting or tool type a route's adapter has no mapping for, and that changes what the
 * model does, is refused here rather than dropped when the request is built: `prompt` (a template
 * only OpenAI's Responses API holds), `image`, and every tool but `function` on Chat Completions
 * and every tool but `function` and `namespace` on Anthropic Messages and Gemini routes (there an
 * OpenAI-hosted tool is left out instead when the route's operator chose `hosted_tools: "omit"`:
 * the route's `omitted` types); `prompt_cache_options` on Anthropic Messages (Claude's cache
 * is set by breakpoints: src/upstream/anthropic/cache-breakpoints.ts) and Gemini (implicit). Responses routes
 * (`responses-http`, `responses-ws`) get every setting and tool as sent.
 * Sources: https://platform.openai.com/docs/api-reference/responses/create,
 *   https://platform.openai.com/docs/api-reference/chat/create (`tools[].type`: `function` and
 *   `custom`; Deltagate's adapter maps `function` only), https://docs.anthropic.com/en/api/messages
 *   (client tools; Anthropic's own server tools are not OpenAI's hosted tools), docs/protocol.md
 *   "Create parameters: where each one goes".
 */
import type { TurnSettings } from "../protocol/create-request.ts";
import { isRecord } from "../protocol/json.ts";
import type { UpstreamApi } from "./routes.ts";
import { UpstreamError, type UpstreamRequest } from "./upstream.ts";

/** What one wire API serves beyond what its adapter maps. */
export interface RouteCapabilities {
  /** The API's name as a client reads it in an error. */
  name: string;
  /** The tool types it serves; null: every type, as sent. */
  toolTypes: ReadonlySet<string> | null;
  /** Settings it cannot serve at all (refused when set, not null). */
  unservable: readonly (keyof TurnSettings)[];
}

const FUNCTION_TOOLS_ONLY: ReadonlySet<string> = new Set(["function"]);
/** Functions, and namespaces of functions flattened (src/upstream/tool-namespaces.ts). */
const FUNCTIONS_AND_NAMESPACES: ReadonlySet<string> = new Set(["function", "namespace"]);

/** Every wire API's capabilities (src/upstream/routes.ts `UPSTREAM_APIS`). */
export const ROUTE_CAPABILITIES: Readonly<Record<UpstreamApi, RouteCapabilities>> = {
  "responses-http": { name: "the Responses API", toolTypes: null, unservable: [] },
  "responses-ws": { name: "the Responses API (WebSocket mode)", toolTypes: null, unservable: [] },
  "chat-completions": {
    name: "Chat Completions",
    toolTypes: FUNCTION_TOOLS_ONLY,
    // `prompt_cache_options` and `prompt_cache_retention` are Chat Completions parameters too.
    unservable: ["prompt", "image"],
  },
  "anthropic-messages": {
    name: "Anthropic Messages",
    toolTypes: FUNCTIONS_AND_NAMESPACES,
    unservable: ["prompt", "image", "prompt_cache_options"],
  },
  // Gemini's cache is implicit, keyed by the prefix (https://ai.google.dev/gemini-api/docs/caching);
  // the settings only Gemini's adapter knows it cannot honour are refused there (gemini/request.ts).
  gemini: {
    name: "the Gemini API",
    toolTypes: FUNCTIONS_AND_NAMESPACES,
    unservable: ["prompt", "image", "prompt_cache_options"],
  },
};

/**
 * The 400 for the first setting or tool a route of `api` cannot serve of `settings`, or null.
 * Never throws (`Upstream.refusal`).
 * @returns `unsupported_parameter` (`param`: the setting) or `unsupported_value`
 *   (`param: "tools[i].type"`, the message naming the type), the client's `model` named.
 */
export function capabilityRefusal(
  api: UpstreamApi,
  settings: Partial<TurnSettings>,
  omitted: ReadonlySet<string> = new Set(),
): UpstreamError | null {
  const { name, toolTypes, unservable } = ROUTE_CAPABILITIES[api];
  const model = typeof settings.model === "string" ? `model '${settings.model}'` : "this model";
  for (const setting of unservable) {
    if (settings[setting] === undefined || settings[setting] === null) continue;
    return refusal(
      "unsupported_parameter",
      `Unsupported parameter: '${setting}' is not supported with ${model}, which is served over ${name}.`,
      setting,
    );
  }
  if (!toolTypes) return null;
  const tools = settings.tools ?? [];
  for (const [index, tool] of tools.entries()) {
    const type = isRecord(tool) && typeof tool.type === "string" ? tool.type : "";
    if (toolTypes.has(type) || omitted.has(type)) continue;
    const supported = [...toolTypes].map((served) => `'${served}'`).join(", ");
    return refusal(
      "unsupported_value",
      `Unsupported value: tool type '${type}' is not supported with ${model}, which is served over ${name}. Supported values are: ${supported}.`,
      `tools[${index}].type`,
    );
  }
  return null;
}

function refusal(code: string, message: string, param: string): UpstreamError {
  return new UpstreamError(400, code, message, "invalid_request_error", null, param);
}

/**
 * `capabilityRefusal`, then what the adapter's request builder refuses of `settings` alone (a
 * request with no input: the settings a translating adapter has no mapping for). Never throws.
 * @param build the adapter's request builder; it throws an `UpstreamError` for what it refuses.
 * @param omitted the tool types the route leaves out rather than refusing (`hosted_tools: "omit"`).
 */
export function translatedRefusal(
  api: UpstreamApi,
  settings: Partial<TurnSettings>,
  build: (probe: UpstreamRequest) => unknown,
  omitted?: ReadonlySet<string>,
): UpstreamError | null {
  const unservable = capabilityRefusal(api, settings, omitted);
  if (unservable) return unservable;
  const probe: UpstreamRequest = {
    model: "",
    input: [],
    newInput: [],
    previousResponseId: null,
    responseId: "",
    settings,
    sessionKey: "",
  };
  try {
    build(probe);
    return null;
  } catch (cause) {
    return cause instanceof UpstreamError ? cause : null;
  }
}
