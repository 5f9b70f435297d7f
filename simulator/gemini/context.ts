/**
 * A Gemini request as the simulator's neutral context (simulator/context.ts), so the one policy
 * (simulator/policy.ts) plans Gemini's turns too: user text → user messages, model text →
 * assistant messages, `functionCall` → `function_call`, `functionResponse` → `function_call_output`
 * (paired by id, or by position in the turn when the calls had none); thought parts carry no
 * meaning for the policy and are left out. `functionDeclarations` → function tools;
 * `functionCallingConfig.mode` `ANY` (one allowed name: that function) / `NONE` → `required`
 * (forced) / `none`.
 * Source: https://ai.google.dev/api/caching#Content, https://ai.google.dev/gemini-api/docs/function-calling.
 */
import type { FunctionTool, SimContext } from "../context.ts";
import { isJsonObject, type JsonObject } from "../json.ts";
import type { Turn } from "./validate.ts";

function outputText(response: unknown): string {
  if (isJsonObject(response) && typeof response.output === "string") return response.output;
  return JSON.stringify(response ?? {});
}

/** The neutral context of a validated body, from its turns. */
export function generateContext(body: JsonObject, turns: Turn[]): SimContext {
  const items: JsonObject[] = [];
  let calls: string[] = [];
  turns.forEach((turn, t) => {
    const role = turn.role === "model" ? "assistant" : "user";
    const texts: string[] = [];
    const flush = () => {
      if (texts.length === 0) return;
      items.push({ type: "message", role, content: texts.join("") });
      texts.length = 0;
    };
    const ownCalls: string[] = [];
    let answered = 0;
    for (const { part } of turn.parts) {
      if (typeof part.text === "string" && part.thought !== true) texts.push(part.text);
      else if (isJsonObject(part.functionCall)) {
        flush();
        const call = part.functionCall;
        const callId = typeof call.id === "string" ? call.id : `call_${t}_${ownCalls.length}`;
        ownCalls.push(callId);
        items.push({
          type: "function_call",
          call_id: callId,
          name: call.name,
          arguments: JSON.stringify(call.args ?? {}),
        });
      } else if (isJsonObject(part.functionResponse)) {
        flush();
        const response = part.functionResponse;
        const callId = typeof response.id === "string" ? response.id : (calls[answered] ?? "");
        answered++;
        items.push({ type: "function_call_output", call_id: callId, output: outputText(response.response) });
      }
    }
    flush();
    calls = ownCalls;
  });
  const tools: FunctionTool[] = [];
  for (const tool of Array.isArray(body.tools) ? body.tools : []) {
    const declarations = isJsonObject(tool) ? tool.functionDeclarations : undefined;
    for (const declaration of Array.isArray(declarations) ? declarations : []) {
      if (isJsonObject(declaration) && typeof declaration.name === "string") {
        tools.push({
          name: declaration.name,
          parameters: declaration.parametersJsonSchema ?? declaration.parameters,
        });
      }
    }
  }
  const calling = isJsonObject(body.toolConfig) ? body.toolConfig.functionCallingConfig : undefined;
  const mode = isJsonObject(calling) ? calling.mode : undefined;
  const allowed =
    isJsonObject(calling) && Array.isArray(calling.allowedFunctionNames) ? calling.allowedFunctionNames : [];
  const toolChoice =
    mode === "NONE"
      ? "none"
      : mode === "ANY" && allowed.length === 1
        ? { type: "function", name: allowed[0] }
        : mode === "ANY"
          ? "required"
          : "auto";
  const generation = isJsonObject(body.generationConfig) ? body.generationConfig : {};
  return {
    items,
    tools,
    toolChoice,
    parallelToolCalls: true,
    maxOutputTokens: typeof generation.maxOutputTokens === "number" ? generation.maxOutputTokens : null,
  };
}
