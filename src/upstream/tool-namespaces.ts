/**
 * OpenAI `namespace` tools on the translating routes (Anthropic Messages, Gemini), whose providers
 * have flat function names only. Owns the flattening rule: a namespace's member function `name`
 * of namespace `ns` is offered to the provider as the function `ns__name`; the provider's call of
 * `ns__name` goes back to the client as a `function_call` with `name` and `namespace`, and a client's
 * `function_call` carrying `namespace` goes upstream under the flattened name again.
 * Invariants: the flattened name must fit the provider's rules for function names and be unique
 * among the turn's functions, else the turn is refused with a 400 naming the tool (never renamed
 * behind the client's back); a `custom` member (free-form input, no provider equivalent) is refused
 * with a 400 naming it; a tool type neither `function` nor `namespace` is refused too (the route's
 * capability check refuses it first: route-capabilities.ts), or, when the route's operator chose
 * `hosted_tools: "omit"`, an OpenAI-hosted tool (`HOSTED_TOOL_TYPES`) is left out. Pure.
 * Sources: https://platform.openai.com/docs/api-reference/responses/create (`tools[]` of type
 *   `namespace`: `name`, `description`, `tools` of function or custom tools; a function call made
 *   through one carries `namespace` on its `function_call` item, `ResponseFunctionToolCall.namespace`),
 *   https://docs.anthropic.com/en/api/messages (tool `name`: `^[a-zA-Z0-9_-]{1,128}$`),
 *   https://ai.google.dev/api/caching#FunctionDeclaration (function `name`: letters, digits,
 *   underscores, colons, dots and dashes, at most 64 characters; Vertex's reference adds "must
 *   start with a letter or an underscore", which the rule below keeps too).
 */
import { isRecord } from "../protocol/json.ts";
import type { SettingRefuser } from "./translated-settings.ts";

/** What joins a namespace and its member's name in the provider's function name. */
export const NAMESPACE_SEPARATOR = "__";

/**
 * The tool types OpenAI runs itself (its hosted tools): what `hosted_tools: "omit"` leaves out.
 * `custom`, `shell`, `local_shell`, `apply_patch` and `computer_use_preview` are executed by the
 * client and are not in the list (leaving them out would hide a tool the client expects to run).
 * Source: https://platform.openai.com/docs/guides/tools.
 */
export const HOSTED_TOOL_TYPES: ReadonlySet<string> = new Set([
  "web_search",
  "web_search_preview",
  "web_search_2025_08_26",
  "web_search_preview_2025_03_11",
  "file_search",
  "code_interpreter",
  "image_generation",
  "mcp",
]);

/** A provider's rule for function names. */
export interface FunctionNameRule {
  /** The pattern a name must match in full. */
  pattern: RegExp;
  /** As a client reads it in the refusal ("^[a-zA-Z0-9_-]{1,128}$"). */
  description: string;
}

/** Anthropic's tool names (https://docs.anthropic.com/en/api/messages `tools[].name`). */
export const ANTHROPIC_TOOL_NAME: FunctionNameRule = {
  pattern: /^[a-zA-Z0-9_-]{1,128}$/,
  description: "^[a-zA-Z0-9_-]{1,128}$",
};

/** Gemini's function names (see the module header). */
export const GEMINI_FUNCTION_NAME: FunctionNameRule = {
  pattern: /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/,
  description: "a letter or underscore, then letters, digits, '_', '.', ':' or '-', at most 64 characters",
};

/** A function the provider is offered: the client's function tool or a namespace's member. */
export interface FlatFunction {
  /** The provider's name (flattened for a namespace's member). */
  name: string;
  description?: string;
  parameters?: unknown;
  strict?: boolean;
}

/** The provider's function name of `name` in `namespace` (null: a top-level function). */
export function flatName(namespace: string | null | undefined, name: string): string {
  return namespace ? `${namespace}${NAMESPACE_SEPARATOR}${name}` : name;
}

/**
 * The provider's name of a `function_call` input item (`name`, flattened when it carries a
 * `namespace`).
 */
export function callName(item: { name?: unknown; namespace?: unknown }): string {
  const name = typeof item.name === "string" ? item.name : "";
  return flatName(typeof item.namespace === "string" ? item.namespace : null, name);
}

/** Options of `flattenTools`. */
export interface FlattenOptions {
  /** The provider's function-name rule. */
  rule: FunctionNameRule;
  /** Leave out `HOSTED_TOOL_TYPES` rather than refusing them (the route's `hosted_tools: "omit"`). */
  omitHosted?: boolean;
}

/**
 * The functions to offer the provider for `tools`, namespaces flattened (see the module header).
 * @throws {UpstreamError} 400 (`refuse`) naming the first tool that cannot be offered.
 */
export function flattenTools(
  tools: readonly unknown[] | null | undefined,
  refuse: SettingRefuser,
  options: FlattenOptions,
): FlatFunction[] {
  const out: FlatFunction[] = [];
  const seen = new Set<string>();
  const add = (tool: Record<string, unknown>, name: string, param: string) => {
    if (!options.rule.pattern.test(name)) {
      throw refuse(param, `The function name '${name}' (it must match ${options.rule.description})`);
    }
    if (seen.has(name)) throw refuse(param, `A second function named '${name}'`);
    seen.add(name);
    const fn: FlatFunction = { name };
    if (typeof tool.description === "string") fn.description = tool.description;
    if (tool.parameters !== undefined && tool.parameters !== null) fn.parameters = tool.parameters;
    if (tool.strict === true) fn.strict = true;
    out.push(fn);
  };
  (tools ?? []).forEach((tool, index) => {
    const type = isRecord(tool) ? String(tool.type) : "?";
    if (isRecord(tool) && tool.type === "function" && typeof tool.name === "string") {
      add(tool, tool.name, `tools[${index}]`);
    } else if (isRecord(tool) && tool.type === "namespace" && typeof tool.name === "string") {
      const members = Array.isArray(tool.tools) ? tool.tools : [];
      members.forEach((member, m) => {
        const param = `tools[${index}].tools[${m}]`;
        if (!isRecord(member) || member.type !== "function" || typeof member.name !== "string") {
          const kind = isRecord(member) ? String(member.type) : "?";
          throw refuse(param, `A tool of type '${kind}' in namespace '${String(tool.name)}'`);
        }
        add(member, flatName(tool.name as string, member.name), param);
      });
    } else if (options.omitHosted && HOSTED_TOOL_TYPES.has(type)) {
      // The operator chose to leave hosted tools out on this route (docs/anthropic.md, docs/gemini.md).
    } else {
      throw refuse(`tools[${index}]`, `A tool of type '${type}'`);
    }
  });
  return out;
}

/** Where a flattened name came from. */
export interface NamespacedName {
  namespace: string;
  name: string;
}

/**
 * The namespace members of `tools` by their provider name, to map the provider's calls back
 * (a name not in the map is a top-level function's).
 */
export function namespacedNames(tools: readonly unknown[] | null | undefined): Map<string, NamespacedName> {
  const out = new Map<string, NamespacedName>();
  for (const tool of tools ?? []) {
    if (!isRecord(tool) || tool.type !== "namespace" || typeof tool.name !== "string") continue;
    for (const member of Array.isArray(tool.tools) ? tool.tools : []) {
      if (!isRecord(member) || typeof member.name !== "string") continue;
      out.set(flatName(tool.name, member.name), { namespace: tool.name, name: member.name });
    }
  }
  return out;
}

/**
 * The `name` (and `namespace`) fields of the `function_call` item for a provider's call of
 * `providerName`, given the turn's name map.
 */
export function callFields(
  providerName: string,
  names: ReadonlyMap<string, NamespacedName>,
): { name: string; namespace?: string } {
  const found = names.get(providerName);
  return found ? { name: found.name, namespace: found.namespace } : { name: providerName };
}
