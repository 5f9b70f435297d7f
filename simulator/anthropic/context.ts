/**
 * A `/v1/messages` request as the simulator's neutral context (simulator/context.ts), so the one
 * policy (simulator/policy.ts) plans Claude's turns too: text blocks → messages, `tool_use` →
 * `function_call` (`call_id` = the block's id), `tool_result` → `function_call_output`; thinking
 * blocks carry no meaning for the policy and are left out. Tools `{name, input_schema}` → function
 * tools; `tool_choice` `auto` / `any` / `tool` / `none` → `auto` / `required` / forced / `none`;
 * `disable_parallel_tool_use` → `parallel_tool_calls: false`.
 * Source: https://docs.anthropic.com/en/api/messages
 */
import type { FunctionTool, SimContext } from "../context.ts";
import { isJsonObject, type JsonObject } from "../json.ts";

function blocksOf(content: unknown): JsonObject[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? content.filter(isJsonObject) : [];
}

function resultText(content: unknown): string {
  return blocksOf(content)
    .map((block) => (typeof block.text === "string" ? block.text : ""))
    .join("\n");
}

/** The neutral context of a validated `/v1/messages` body. */
export function messagesContext(body: JsonObject): SimContext {
  const items: JsonObject[] = [];
  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    if (!isJsonObject(message)) continue;
    const role = message.role === "assistant" ? "assistant" : "user";
    const texts: string[] = [];
    const flushText = () => {
      if (texts.length === 0) return;
      items.push({ type: "message", role, content: texts.join("\n") });
      texts.length = 0;
    };
    for (const block of blocksOf(message.content)) {
      if (block.type === "text" && typeof block.text === "string") texts.push(block.text);
      else if (block.type === "tool_use") {
        flushText();
        items.push({
          type: "function_call",
          call_id: block.id,
          name: block.name,
          arguments: JSON.stringify(block.input ?? {}),
        });
      } else if (block.type === "tool_result") {
        flushText();
        items.push({
          type: "function_call_output",
          call_id: block.tool_use_id,
          output: resultText(block.content),
        });
      }
    }
    flushText();
  }
  const tools: FunctionTool[] = [];
  for (const tool of Array.isArray(body.tools) ? body.tools : []) {
    if (
      isJsonObject(tool) &&
      typeof tool.name === "string" &&
      (tool.type === undefined || tool.type === "custom")
    ) {
      tools.push({ name: tool.name, parameters: tool.input_schema });
    }
  }
  const choice = isJsonObject(body.tool_choice) ? body.tool_choice : { type: "auto" };
  const toolChoice =
    choice.type === "any"
      ? "required"
      : choice.type === "none"
        ? "none"
        : choice.type === "tool"
          ? { type: "function", name: choice.name }
          : "auto";
  return {
    items,
    tools,
    toolChoice,
    parallelToolCalls: choice.disable_parallel_tool_use !== true,
    maxOutputTokens: typeof body.max_tokens === "number" ? body.max_tokens : null,
  };
}
