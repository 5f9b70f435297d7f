/**
 * Converts Chat Completions requests into the neutral context (spec §7, reversed): messages →
 * Responses-style items, `tools` → function tools, `tool_choice` → Responses form. Validates
 * tool-call pairing with Chat Completions' own error messages.
 */
import { contentText, type FunctionTool } from "./context.ts";
import { invalidRequest } from "./errors.ts";
import { isJsonObject, type JsonObject } from "./json.ts";

/** Converts `messages` to context items; throws a 400 SimError for malformed messages or bad pairing. */
export function messagesToItems(messages: unknown): JsonObject[] {
  if (!Array.isArray(messages) || messages.length === 0) {
    throw invalidRequest("Invalid value for 'messages': expected a non-empty array.", "messages");
  }
  const items: JsonObject[] = [];
  const pending = new Set<string>();
  messages.forEach((m, i) => {
    if (!isJsonObject(m) || typeof m.role !== "string") {
      throw invalidRequest(`Invalid value for 'messages[${i}]'.`, `messages[${i}]`);
    }
    if (m.role !== "tool" && pending.size > 0) throw missingToolResponses(pending);
    if (m.role === "tool") {
      const id = typeof m.tool_call_id === "string" ? m.tool_call_id : "";
      if (!pending.delete(id)) {
        throw invalidRequest(
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          `messages.[${i}].role`,
        );
      }
      items.push({ type: "function_call_output", call_id: id, output: contentText(m.content) });
      return;
    }
    const text = contentText(m.content);
    if (m.role !== "assistant" || text !== "") items.push({ type: "message", role: m.role, content: text });
    if (m.role === "assistant" && Array.isArray(m.tool_calls)) {
      for (const call of m.tool_calls) {
        if (!isJsonObject(call) || !isJsonObject(call.function) || typeof call.id !== "string") continue;
        pending.add(call.id);
        items.push({
          type: "function_call",
          call_id: call.id,
          name: String(call.function.name ?? ""),
          arguments: String(call.function.arguments ?? ""),
        });
      }
    }
  });
  if (pending.size > 0) throw missingToolResponses(pending);
  return items;
}

function missingToolResponses(pending: Set<string>): Error {
  return invalidRequest(
    `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...pending].join(", ")}`,
    "messages",
  );
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
