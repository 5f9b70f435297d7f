/**
 * Responses context → Anthropic Messages `system` and `messages` (docs/anthropic.md). Owns the
 * rules Claude enforces on a conversation:
 * - `instructions`, then the `system` / `developer` messages that open the context, become the
 *   top-level `system` blocks; a `system` / `developer` message later in the conversation has no
 *   place of its own and becomes user text (Claude has no mid-conversation system role);
 * - roles alternate: consecutive content of the same role is merged into one message;
 * - a `function_call` made through a `namespace` tool goes back under its flattened name
 *   (src/upstream/tool-namespaces.ts);
 * - each assistant message's `tool_use` blocks are answered by `tool_result` blocks that open the
 *   next user message, in call order, whatever order the client sent the outputs in;
 * - a `reasoning` item carrying Claude thinking blocks (thinking-blocks.ts) goes back as those
 *   blocks, byte-exact, in its place in the assistant message; reasoning without one (another
 *   provider's, or none) is left out, as item-conversion.ts does for the Responses upstreams.
 * Invariant: Deltagate item ids never reach the upstream; what cannot be carried is refused with a
 * 400 naming it, never dropped silently. Pure: no I/O.
 * Source: https://docs.anthropic.com/en/api/messages,
 * https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use,
 * https://docs.anthropic.com/en/docs/build-with-claude/vision,
 * https://docs.anthropic.com/en/docs/build-with-claude/pdf-support.
 */
import type { Item } from "../../protocol/items.ts";
import { isRecord, type Json } from "../../protocol/json.ts";
import {
  callArgumentsObject,
  dataUrl,
  outputsByCallId,
  stringField,
  TEXT_PART_TYPES,
  unsupportedContent,
} from "../content-parts.ts";
import { ORIGIN_FIELD } from "../encrypted-reasoning.ts";
import { callName } from "../tool-namespaces.ts";
import { openThinking } from "./thinking-blocks.ts";
import type { AnthropicMessage, ContentBlock } from "./wire.ts";

type Fields = { [field: string]: unknown };

/**
 * A message's content (a string or Responses parts) as Anthropic blocks: text parts → `text`
 * (empty ones left out: Claude refuses empty text blocks), `input_image` → `image` (a `data:` URL
 * as base64, else by URL), `input_file` with PDF `file_data` or a `file_url` → `document`.
 * @throws {UpstreamError} 400 for an image or file by `file_id` (no Files API on this route) and
 *   for any other part type.
 */
export function toBlocks(content: unknown): ContentBlock[] {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  const out: ContentBlock[] = [];
  for (const part of Array.isArray(content) ? content.filter(isRecord) : []) {
    const type = stringField(part.type) ?? "";
    const text = stringField(part.text);
    if (TEXT_PART_TYPES.has(type) && text !== undefined) {
      if (text !== "") out.push({ type: "text", text });
    } else if (type === "refusal") {
      const refusal = stringField(part.refusal) ?? "";
      if (refusal !== "") out.push({ type: "text", text: refusal });
    } else if (type === "input_image") {
      const url = stringField(part.image_url);
      if (!url)
        throw unsupportedContent(
          "input_image parts need an image_url for an Anthropic upstream (no file_id).",
        );
      const inline = dataUrl(url);
      out.push({
        type: "image",
        source: inline
          ? { type: "base64", media_type: inline.mediaType, data: inline.data }
          : { type: "url", url },
      });
    } else if (type === "input_file") {
      const data = stringField(part.file_data);
      const url = stringField(part.file_url);
      const inline = data ? (dataUrl(data) ?? { mediaType: "application/pdf", data }) : null;
      if (inline) {
        out.push({
          type: "document",
          source: { type: "base64", media_type: inline.mediaType, data: inline.data },
        });
      } else if (url) {
        out.push({ type: "document", source: { type: "url", url } });
      } else {
        throw unsupportedContent(
          "input_file parts need file_data or file_url for an Anthropic upstream (no file_id).",
        );
      }
    } else {
      throw unsupportedContent(`Content parts of type '${type}' cannot be sent to an Anthropic upstream.`);
    }
  }
  return out;
}

/** A `function_call`'s arguments as the `tool_use` input object. */
function toolInput(item: Fields): Json {
  return callArgumentsObject(item, "an Anthropic upstream");
}

/** A `function_call_output` as a `tool_result` block (text and image parts kept). */
function toolResult(callId: string, output: unknown): ContentBlock {
  const content = typeof output === "string" ? output : toBlocks(output);
  return { type: "tool_result", tool_use_id: callId, content: content.length === 0 ? "" : content };
}

/** What the translation produced. */
export interface AnthropicConversation {
  system: string[];
  messages: AnthropicMessage[];
}

/**
 * Translates the full turn context.
 * @param instructions the current turn's instructions (null/empty: none).
 * @param items the full context, oldest first, pairing validated.
 * @param origin the route's base URL: reasoning another upstream issued is left out.
 * @throws {UpstreamError} 400 for content or items an Anthropic upstream cannot carry.
 */
export function toAnthropicConversation(
  instructions: string | null | undefined,
  items: readonly Item[],
  origin: string,
): AnthropicConversation {
  const system: string[] = instructions ? [instructions] : [];
  const messages: AnthropicMessage[] = [];
  const outputs = outputsByCallId(items);
  const placed = new Set<string>();
  /** tool_use ids of the open assistant message not answered yet. */
  let pending: string[] = [];
  let opening = true;

  const push = (role: "user" | "assistant", blocks: ContentBlock[]) => {
    if (blocks.length === 0) return;
    if (role === "user") flush();
    const last = messages.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else messages.push({ role, content: [...blocks] });
  };
  /** Answers the open assistant message's calls right after it. */
  const flush = () => {
    const calls = pending;
    pending = [];
    const results: ContentBlock[] = [];
    for (const id of calls) {
      if (placed.has(id) || !outputs.has(id)) continue;
      placed.add(id);
      results.push(toolResult(id, outputs.get(id)));
    }
    if (results.length > 0) messages.push({ role: "user", content: results });
  };

  items.forEach((item, index) => {
    const fields = item as Fields;
    if (item.type === "message") {
      const role = stringField(fields.role);
      if ((role === "system" || role === "developer") && opening) {
        const text = toBlocks(fields.content)
          .map((block) => (block.type === "text" ? block.text : ""))
          .join("\n");
        if (text !== "") system.push(text);
        return;
      }
      opening = false;
      push(role === "assistant" ? "assistant" : "user", toBlocks(fields.content));
      return;
    }
    opening = false;
    if (item.type === "function_call") {
      const id = stringField(fields.call_id) ?? "";
      push("assistant", [{ type: "tool_use", id, name: callName(fields), input: toolInput(fields) }]);
      pending.push(id);
    } else if (item.type === "function_call_output") {
      flush(); // places this output and its siblings in call order
      const id = stringField(fields.call_id) ?? "";
      if (placed.has(id)) return;
      placed.add(id);
      push("user", [toolResult(id, fields.output)]);
    } else if (item.type === "reasoning") {
      const from = fields[ORIGIN_FIELD];
      if (typeof from === "string" && from !== origin) return;
      const blocks = openThinking(fields.encrypted_content);
      if (blocks) push("assistant", blocks);
    } else {
      throw unsupportedContent(
        `Input items of type '${item.type}' cannot be sent to an Anthropic upstream.`,
        `input[${index}]`,
      );
    }
  });
  flush();
  return { system, messages };
}
