/**
 * Request validation of the simulator's `/v1/messages`, with Anthropic's messages: `model`,
 * `max_tokens` and `messages` required; client tool names of `^[a-zA-Z0-9_-]{1,128}$`; roles `user` / `assistant`; `thinking.budget_tokens`
 * ≥ 1024 and below `max_tokens`; every `tool_use` answered by a `tool_result` at the start of the
 * next user message and every `tool_result` answering a `tool_use` of the message before it;
 * with thinking enabled, the assistant turn of a tool loop must start with a thinking block, and
 * every thinking block must carry the signature Claude gave it (a modified or missing one is
 * refused). Stricter than Anthropic in one place, on purpose: consecutive messages of the same
 * role are refused (Anthropic merges them), so a gateway that forgets to merge is caught.
 * Source: https://docs.anthropic.com/en/api/messages,
 * https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use (tool results
 * first in the user message), https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking.
 */
import { isJsonObject, type JsonObject } from "../json.ts";
import { invalid } from "./errors.ts";
import type { ThinkingSigner } from "./signatures.ts";

function blocksOf(message: JsonObject): JsonObject[] {
  const content = message.content;
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) return [];
  return content.filter(isJsonObject);
}

/** The thinking budget when `thinking` is enabled, else null. */
export function thinkingBudget(body: JsonObject): number | null {
  const thinking = body.thinking;
  if (!isJsonObject(thinking) || thinking.type !== "enabled") return null;
  return typeof thinking.budget_tokens === "number" ? thinking.budget_tokens : null;
}

/**
 * Claude's client tool names (https://docs.anthropic.com/en/api/messages `tools[].name`); the
 * refusal's wording as users quote Claude's 400 (modelcontextprotocol/modelcontextprotocol #1345,
 * jedisct1/openapi-mcp #9).
 */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

/** Refuses a client tool whose name Claude refuses, with Anthropic's wording. */
function validateToolNames(tools: unknown): void {
  if (!Array.isArray(tools)) return;
  tools.forEach((tool: unknown, t: number) => {
    if (!isJsonObject(tool) || (tool.type !== undefined && tool.type !== "custom")) return;
    if (typeof tool.name !== "string" || !TOOL_NAME.test(tool.name)) {
      throw invalid(`tools.${t}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`);
    }
  });
}

/**
 * Validates a `/v1/messages` body.
 * @throws {AnthropicError} 400 with Anthropic's wording of the first problem found.
 */
export function validateMessages(body: JsonObject, signer: ThinkingSigner): void {
  if (typeof body.model !== "string") throw invalid("model: Field required");
  if (typeof body.max_tokens !== "number" || !Number.isInteger(body.max_tokens) || body.max_tokens < 1) {
    throw invalid("max_tokens: Field required");
  }
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) throw invalid("messages: Field required");
  if (isJsonObject(body.thinking) && body.thinking.type === "enabled") {
    const budget = body.thinking.budget_tokens;
    if (typeof budget !== "number" || budget < 1024) {
      throw invalid("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024");
    }
    if (budget >= body.max_tokens) {
      throw invalid("`max_tokens` must be greater than `thinking.budget_tokens`.");
    }
  }
  validateToolNames(body.tools);
  const thinking = thinkingBudget(body) !== null;
  let previousRole: unknown = null;
  let pendingToolUses: string[] = [];
  messages.forEach((message: unknown, m: number) => {
    if (!isJsonObject(message)) throw invalid(`messages.${m}: Input should be an object`);
    const role = message.role;
    if (role !== "user" && role !== "assistant") {
      throw invalid(`messages.${m}.role: Input should be 'user' or 'assistant'`);
    }
    if (role === previousRole) {
      throw invalid(`messages.${m}: roles must alternate between "user" and "assistant" (simulator rule)`);
    }
    previousRole = role;
    const blocks = blocksOf(message);
    if (blocks.length === 0) throw invalid(`messages.${m}: all messages must have non-empty content`);
    if (role === "user") {
      const answered = new Set<string>();
      let leading = true;
      blocks.forEach((block, b) => {
        if (block.type !== "tool_result") {
          leading = false;
          return;
        }
        const id = String(block.tool_use_id);
        if (!leading || !pendingToolUses.includes(id)) {
          throw invalid(
            `messages.${m}.content.${b}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
          );
        }
        answered.add(id);
      });
      const missing = pendingToolUses.filter((id) => !answered.has(id));
      if (missing.length > 0) {
        throw invalid(
          `messages.${m}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
        );
      }
      pendingToolUses = [];
      return;
    }
    pendingToolUses = [];
    blocks.forEach((block, b) => {
      if (block.type === "tool_use") pendingToolUses.push(String(block.id));
      if (block.type === "thinking") {
        if (typeof block.signature !== "string" || block.signature === "") {
          throw invalid(`messages.${m}.content.${b}.thinking.signature: Field required`);
        }
        if (typeof block.thinking !== "string" || !signer.verify(block.thinking, block.signature)) {
          throw invalid(`messages.${m}.content.${b}: Invalid \`signature\` in \`thinking\` block`);
        }
      }
      if (block.type === "redacted_thinking") {
        if (typeof block.data !== "string" || !signer.verifyRedacted(block.data)) {
          throw invalid(`messages.${m}.content.${b}: Invalid \`data\` in \`redacted_thinking\` block`);
        }
      }
    });
  });
  if (pendingToolUses.length > 0 && previousRole === "assistant") return; // prefill ending in tool_use
  // With thinking on, the assistant turn of an unfinished tool loop must start with thinking.
  const last = messages.at(-1);
  const assistant = messages.at(-2);
  if (!thinking || !isJsonObject(last) || !isJsonObject(assistant)) return;
  const lastBlocks = blocksOf(last);
  if (!lastBlocks.some((block) => block.type === "tool_result")) return;
  const first = blocksOf(assistant)[0];
  if (first?.type !== "thinking" && first?.type !== "redacted_thinking") {
    throw invalid(
      `messages.${messages.length - 2}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first?.type)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks).`,
    );
  }
}
