/**
 * The simulator's deterministic "model": from the effective context, tools and directives it
 * plans the output items of one turn. Agent-like: while tool rounds remain it calls a function
 * tool (preferring shell-like tools) with schema-valid arguments; afterwards, or without tools,
 * it answers with text. See simulator/README.md for the rules.
 */
import { answerText } from "./answer-text.ts";
import {
  type FunctionTool,
  lastUserIndex,
  lastUserText,
  type SimContext,
  toolOutputText,
} from "./context.ts";
import { type Directives, stripDirectives } from "./directives.ts";
import { newId } from "./ids.ts";
import { canonicalJson, fnv1a, isJsonObject } from "./json.ts";
import { argumentsForTool } from "./schema-args.ts";
import { estimateTokens } from "./tokens.ts";

/** One planned output item. Ids for the Responses wire (`msg_`, `fc_`) are assigned later. */
export type PlannedItem =
  | { type: "message"; text: string }
  | { type: "function_call"; name: string; callId: string; arguments: string };

/** The plan of a turn. `truncated` = the text was cut at the output token cap. */
export interface Plan {
  items: PlannedItem[];
  truncated: boolean;
}

/** Shell command used when the user message has no backticked command. */
export const DEFAULT_COMMAND = "echo deltagate-sim";

const SHELL_HINTS = ["shell", "exec", "bash", "command", "terminal"];

/** Picks the tool to call: the forced one, else the first shell-like one, else the first. */
function chooseTool(tools: FunctionTool[], toolChoice: unknown): FunctionTool | undefined {
  if (isJsonObject(toolChoice) && toolChoice.type === "function" && typeof toolChoice.name === "string") {
    const forced = tools.find((t) => t.name === toolChoice.name);
    if (forced) return forced;
  }
  const shell = tools.find((t) => SHELL_HINTS.some((h) => t.name.toLowerCase().includes(h)));
  return shell ?? tools[0];
}

/** The first `single-backticked` command in `text`, or the default command. */
export function commandFromText(text: string): string {
  const m = /(?<!`)`([^`\n]+)`(?!`)/.exec(text);
  return m?.[1]?.trim() || DEFAULT_COMMAND;
}

/**
 * Tool rounds already done since the last user message: the number of maximal runs of
 * consecutive `function_call` items after it (parallel calls of one round form one run).
 */
export function completedToolRounds(ctx: SimContext): number {
  const start = lastUserIndex(ctx.items) + 1;
  let rounds = 0;
  let inRun = false;
  for (let i = start; i < ctx.items.length; i++) {
    const isCall = ctx.items[i]?.type === "function_call";
    if (isCall && !inRun) rounds++;
    inRun = isCall;
  }
  return rounds;
}

function toolOutputsSinceUser(ctx: SimContext): string[] {
  const start = lastUserIndex(ctx.items) + 1;
  const outputs: string[] = [];
  for (const item of ctx.items.slice(start)) {
    if (item.type === "function_call_output") outputs.push(toolOutputText(item.output));
  }
  return outputs;
}

/** `text` with `emit` woven in after its middle word (unchanged when `emit` is null). */
function withEmitted(text: string, emit: string | null): string {
  if (emit === null) return text;
  const words = text.split(" ");
  const half = Math.floor(words.length / 2);
  return [...words.slice(0, half), emit, ...words.slice(half)].join(" ").trim();
}

/** Cuts `text` to at most `maxTokens` estimated tokens (by code points, 4 per token for ASCII). */
function truncateToTokens(text: string, maxTokens: number): string {
  const chars = Array.from(text);
  let out = "";
  for (const ch of chars) {
    if (estimateTokens(out + ch) > maxTokens) break;
    out += ch;
  }
  return out;
}

/**
 * Plans the output of one turn.
 * - Function tools present, `tool_choice` not "none", and fewer completed rounds than
 *   `directives.toolRounds` (or `tool_choice` "required"/forced function) → `parallel`
 *   function calls (1 when `parallel_tool_calls` is false).
 * - Otherwise one assistant message: after tool outputs "Done after K tool call(s). Last
 *   output: …", else `answerTokens` deterministic words seeded by the context.
 * The message text is cut to `ctx.maxOutputTokens` (then `truncated` is true).
 */
export function planTurn(ctx: SimContext, directives: Directives): Plan {
  const choice = ctx.toolChoice;
  const forced = choice === "required" || (isJsonObject(choice) && choice.type === "function");
  const tool = choice === "none" ? undefined : chooseTool(ctx.tools, choice);
  if (tool && (forced || completedToolRounds(ctx) < directives.toolRounds)) {
    const userText = lastUserText(ctx.items);
    const command = commandFromText(userText);
    const hints = {
      command: directives.emit === null ? command : `${command} ${directives.emit}`,
      userText: stripDirectives(userText),
    };
    const count = ctx.parallelToolCalls ? directives.parallel : 1;
    const items: PlannedItem[] = [];
    for (let i = 0; i < count; i++) {
      items.push({
        type: "function_call",
        name: tool.name,
        callId: newId("call_", 12),
        arguments: argumentsForTool(tool.parameters, hints),
      });
    }
    return { items, truncated: false };
  }
  const outputs = toolOutputsSinceUser(ctx);
  let text: string;
  if (outputs.length > 0) {
    const last = Array.from(outputs[outputs.length - 1] ?? "")
      .slice(0, 200)
      .join("");
    text = `Done after ${outputs.length} tool call(s). Last output: ${last}`;
    if (directives.emit !== null) text = `${text} ${directives.emit}`;
  } else {
    text = withEmitted(answerText(fnv1a(canonicalJson(ctx.items)), directives.answerTokens), directives.emit);
  }
  let truncated = false;
  if (ctx.maxOutputTokens !== null && estimateTokens(text) > ctx.maxOutputTokens) {
    text = truncateToTokens(text, ctx.maxOutputTokens);
    truncated = true;
  }
  return { items: [{ type: "message", text }], truncated };
}
