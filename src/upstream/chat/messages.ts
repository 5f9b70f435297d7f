/**
 * Responses context → Chat Completions `messages` (docs/upstreams.md). Owns the pairing
 * and ordering rules Chat Completions servers enforce:
 * - the current turn's `instructions` become the single leading system message (nothing is ever
 *   synthesized from earlier turns: history items are translated as items only);
 * - consecutive `function_call` items (and an immediately preceding assistant message) become ONE
 *   assistant message with `tool_calls`, and the `tool` messages answering them follow it
 *   directly, in the order of the calls, whatever order the client sent the outputs in;
 * - `reasoning`, `compaction` and unknown items are dropped and do not break adjacency.
 * Invariant: Deltagate item ids never reach the upstream (only item fields are read).
 * Pure: no I/O.
 */
import type { Item } from "../../protocol/items.ts";
import { isRecord } from "../../protocol/json.ts";
import { outputsByCallId } from "../content-parts.ts";
import { UpstreamError } from "../upstream.ts";
import type {
  ChatAssistantMessage,
  ChatContentPart,
  ChatMessage,
  ChatToolCall,
  ChatToolMessage,
} from "./wire.ts";

type Fields = { [field: string]: unknown };

const TEXT_PARTS = new Set(["input_text", "output_text", "text"]);

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function parts(content: unknown): Fields[] {
  if (!Array.isArray(content)) return [];
  return content.filter(isRecord);
}

function unsupported(message: string): UpstreamError {
  return new UpstreamError(400, "unsupported_content", message, "invalid_request_error");
}

/**
 * A user/system/developer message's content: a string stays a string; parts become Chat parts
 * (`input_text` → `text`, `input_image` → `image_url {url, detail}` with OpenAI's default detail
 * `auto` when the client gave none, `input_file` → `file`).
 * A single text part collapses to a plain string (many open-source servers only take strings).
 * @throws {UpstreamError} 400 `unsupported_content` for a part Chat Completions cannot carry
 *   (an image by `file_id` only, a file by `file_url` only, an unknown part type).
 */
export function toChatContent(content: unknown): string | ChatContentPart[] {
  if (typeof content === "string") return content;
  const out: ChatContentPart[] = [];
  for (const part of parts(content)) {
    const type = str(part.type) ?? "";
    const text = str(part.text);
    if (TEXT_PARTS.has(type) && text !== undefined) {
      out.push({ type: "text", text });
    } else if (type === "input_image") {
      const url = str(part.image_url);
      if (!url) throw unsupported("input_image parts need an image_url for a Chat Completions upstream.");
      // OpenAI's default detail is "auto" on both APIs; sent explicitly, so an upstream with
      // another default sees what the client would have got from OpenAI.
      // https://platform.openai.com/docs/api-reference/chat/create (`image_url.detail`)
      out.push({ type: "image_url", image_url: { url, detail: str(part.detail) ?? "auto" } });
    } else if (type === "input_file") {
      const file: { file_data?: string; file_id?: string; filename?: string } = {};
      const data = str(part.file_data);
      const id = str(part.file_id);
      const name = str(part.filename);
      if (data) file.file_data = data;
      if (id) file.file_id = id;
      if (name) file.filename = name;
      if (!data && !id) {
        throw unsupported("input_file parts need file_data or file_id for a Chat Completions upstream.");
      }
      out.push({ type: "file", file });
    } else {
      throw unsupported(`Content parts of type '${type}' cannot be sent to a Chat Completions upstream.`);
    }
  }
  const [only] = out;
  return out.length === 1 && only?.type === "text" ? only.text : out;
}

/** Concatenated text of a content value (string, or the text parts of a part list). */
function joinedText(content: unknown): string {
  if (typeof content === "string") return content;
  return parts(content)
    .filter((part) => TEXT_PARTS.has(str(part.type) ?? ""))
    .map((part) => str(part.text) ?? "")
    .join("");
}

/** An assistant message item → `{role:"assistant", content, refusal?}` (text parts joined). */
function assistantMessage(content: unknown): ChatAssistantMessage {
  const message: ChatAssistantMessage = { role: "assistant", content: joinedText(content) };
  const refusal = parts(content)
    .filter((part) => part.type === "refusal")
    .map((part) => str(part.refusal) ?? "")
    .join("");
  if (refusal) message.refusal = refusal;
  return message;
}

/** A `function_call_output` → `{role:"tool"}`; non-text output parts are dropped. */
function toolMessage(callId: string, output: unknown): ChatToolMessage {
  return { role: "tool", tool_call_id: callId, content: joinedText(output) };
}

/**
 * Translates the full turn context.
 * @param instructions the CURRENT turn's instructions (null/empty: no system message).
 * @param items the full context, oldest first (history + this turn's input), pairing validated.
 * @returns the `messages` array, oldest first.
 * @throws {UpstreamError} 400 for content parts Chat Completions cannot carry (see toChatContent).
 */
export function toChatMessages(
  instructions: string | null | undefined,
  items: readonly Item[],
): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (instructions) messages.push({ role: "system", content: instructions });

  // Outputs are looked up by call_id so they can be placed right after their calls.
  const outputs = outputsByCallId(items);
  const placed = new Set<string>();
  /** The assistant message collecting the current run of function calls. */
  let open: ChatAssistantMessage | null = null;
  /** The assistant message that directly precedes (ignoring dropped items), if any. */
  let previousAssistant: ChatAssistantMessage | null = null;

  const closeRun = () => {
    if (!open) return;
    for (const call of open.tool_calls ?? []) {
      if (placed.has(call.id) || !outputs.has(call.id)) continue;
      placed.add(call.id);
      messages.push(toolMessage(call.id, outputs.get(call.id)));
    }
    if (open.content === "") open.content = null;
    open = null;
  };

  for (const item of items) {
    const fields = item as Fields;
    if (item.type === "function_call") {
      if (!open) {
        open = previousAssistant ?? { role: "assistant", content: null };
        if (!previousAssistant) messages.push(open);
        open.tool_calls = [];
      }
      const call: ChatToolCall = {
        id: str(fields.call_id) ?? "",
        type: "function",
        function: { name: str(fields.name) ?? "", arguments: str(fields.arguments) ?? "" },
      };
      open.tool_calls?.push(call);
      previousAssistant = null;
    } else if (item.type === "function_call_output") {
      closeRun();
      previousAssistant = null;
      const callId = str(fields.call_id) ?? "";
      if (placed.has(callId)) continue;
      // An output whose call is not in the context: kept in place (pairing validation upstream
      // of the adapter makes this unreachable for Deltagate's own contexts).
      placed.add(callId);
      messages.push(toolMessage(callId, fields.output));
    } else if (item.type === "message") {
      closeRun();
      const role = str(fields.role);
      if (role === "assistant") {
        previousAssistant = assistantMessage(fields.content);
        messages.push(previousAssistant);
      } else {
        previousAssistant = null;
        const chatRole = role === "system" || role === "developer" ? role : "user";
        messages.push({ role: chatRole, content: toChatContent(fields.content) });
      }
    }
    // reasoning, compaction and unknown items: dropped; they do not break a run.
  }
  closeRun();
  return messages;
}
