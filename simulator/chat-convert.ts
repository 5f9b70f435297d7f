/**
 * Converts Chat Completions requests into the neutral context (spec §7, reversed): messages →
 * Responses-style items, `tools` → function tools, `tool_choice` → Responses form. Validation
 * (pairing, roles, images…) is chat-rules.ts's, before conversion.
 */
import { contentText, type FunctionTool } from "./context.ts";
import { isJsonObject, type JsonObject } from "./json.ts";

/**
 * Converts `messages` (validated by chat-rules.ts) to context items: tool messages become
 * `function_call_output`, assistant `tool_calls` become `function_call` items.
 */
export function messagesToItems(messages: unknown): JsonObject[] {
  const items: JsonObject[] = [];
  for (const m of Array.isArray(messages) ? messages : []) {
    if (!isJsonObject(m)) continue;
    if (m.role === "tool") {
      const id = typeof m.tool_call_id === "string" ? m.tool_call_id : "";
      items.push({ type: "function_call_output", call_id: id, output: contentText(m.content) });
      continue;
    }
    const text = contentText(m.content);
    if (m.role !== "assistant" || text !== "") items.push({ type: "message", role: m.role, content: text });
    if (m.role === "assistant" && Array.isArray(m.tool_calls)) {
      for (const call of m.tool_calls) {
        if (!isJsonObject(call) || !isJsonObject(call.function) || typeof call.id !== "string") continue;
        items.push({
          type: "function_call",
          call_id: call.id,
          name: String(call.function.name ?? ""),
          arguments: String(call.function.arguments ?? ""),
        });
      }
    }
  }
  return items;
}

/** Chat `tools` → Responses-form tools `{type:"function", name, parameters}` (function tools only). */
export function chatToolsToResponses(tools: unknown): JsonObject[] {
  if (!Array.isArray(tools)) return [];
  const out: JsonObject[] = [];
  for (const t of tools) {
    if (isJsonObject(t) && t.type === "function" && isJsonObject(t.function)) {
      out.push({ type: "function", name: t.function.name, parameters: t.function.parameters });
    }
  }
  return out;
}

/** Chat `tool_choice` → Responses form (`{type:"function", function:{name}}` → `{type:"function", name}`). */
export function chatToolChoiceToResponses(choice: unknown): unknown {
  if (isJsonObject(choice) && choice.type === "function" && isJsonObject(choice.function)) {
    return { type: "function", name: choice.function.name };
  }
  return choice;
}

/** Function tools of a converted tools list (typed for the policy). */
export function asFunctionTools(tools: JsonObject[]): FunctionTool[] {
  return tools.map((t) => ({ name: String(t.name ?? ""), parameters: t.parameters }));
}
