/**
 * Responses context → Gemini `systemInstruction` and `contents` (docs/gemini.md). Owns the rules
 * Gemini enforces on a conversation:
 * - `instructions`, then the `system` / `developer` messages that open the context, become
 *   `systemInstruction`; a later `system` / `developer` message is user text (Gemini has no
 *   mid-conversation system role);
 * - user content is `role: "user"`, assistant content and function calls `role: "model"`;
 *   consecutive content of the same role is merged into one content;
 * - a `function_call` made through a `namespace` tool goes back under its flattened name
 *   (src/upstream/tool-namespaces.ts);
 * - the `functionCall` parts of a model content are answered by as many `functionResponse` parts
 *   in the next user content, in call order (`name` from the call, `id` when Gemini issued one),
 *   whatever order the client sent the outputs in;
 * - a `reasoning` item carrying Gemini thought signatures (thought-signatures.ts) goes back as its
 *   signed parts, verbatim, and its `next` signature on the first part of the model item that
 *   follows it; reasoning without one (another provider's, or none) is left out.
 * Invariant: Deltagate item ids never reach the upstream, nor a call id Deltagate minted (an
 * `fc_` id of its own, src/util/ids.ts) for a call Gemini sent without one; what cannot be
 * carried is refused with a 400 naming it, never dropped silently. Pure: no I/O.
 * Source: https://ai.google.dev/api/caching#Content (Content, Part),
 * https://ai.google.dev/gemini-api/docs/function-calling (functionCall / functionResponse turns),
 * https://ai.google.dev/gemini-api/docs/thought-signatures,
 * https://ai.google.dev/gemini-api/docs/image-understanding (inline image data).
 */
import type { Item } from "../../protocol/items.ts";
import { isRecord, type Json } from "../../protocol/json.ts";
import { isMintedItemId } from "../../util/ids.ts";
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
import { openThoughts } from "./thought-signatures.ts";
import type { GeminiContent, GeminiPart } from "./wire.ts";

type Fields = { [field: string]: unknown };

/**
 * A message's content (a string or Responses parts) as Gemini parts: text parts → `text` (empty
 * ones left out), `input_image` / `input_file` with a `data:` URL (or base64 `file_data`, a PDF
 * by default) → `inlineData`.
 * @throws {UpstreamError} 400 for an image or file by URL or `file_id` (Gemini reads remote files
 *   through its own Files API only) and for any other part type.
 */
export function toParts(content: unknown): GeminiPart[] {
  if (typeof content === "string") return content === "" ? [] : [{ text: content }];
  const out: GeminiPart[] = [];
  for (const part of Array.isArray(content) ? content.filter(isRecord) : []) {
    const type = stringField(part.type) ?? "";
    const text = stringField(part.text);
    if (TEXT_PART_TYPES.has(type) && text !== undefined) {
      if (text !== "") out.push({ text });
    } else if (type === "refusal") {
      const refusal = stringField(part.refusal) ?? "";
      if (refusal !== "") out.push({ text: refusal });
    } else if (type === "input_image") {
      const inline = dataUrl(stringField(part.image_url) ?? "");
      if (!inline) {
        throw unsupportedContent(
          "input_image parts need a data: URL for a Gemini upstream (no URL, no file_id).",
        );
      }
      out.push({ inlineData: { mimeType: inline.mediaType, data: inline.data } });
    } else if (type === "input_file") {
      const data = stringField(part.file_data);
      const inline = data ? (dataUrl(data) ?? { mediaType: "application/pdf", data }) : null;
      if (!inline) {
        throw unsupportedContent(
          "input_file parts need file_data for a Gemini upstream (no file_url, no file_id).",
        );
      }
      out.push({ inlineData: { mimeType: inline.mediaType, data: inline.data } });
    } else {
      throw unsupportedContent(`Content parts of type '${type}' cannot be sent to a Gemini upstream.`);
    }
  }
  return out;
}

/** A `function_call`'s arguments as the `functionCall.args` object. */
function callArgs(item: Fields): Json {
  return callArgumentsObject(item, "a Gemini upstream");
}

/**
 * A `function_call_output`'s output as the `functionResponse.response` object: `{output: text}`
 * (Gemini takes any JSON object; text parts are joined).
 * @throws {UpstreamError} 400 for an output part that is not text.
 */
function responseOf(output: unknown): Json {
  if (typeof output === "string") return { output };
  const texts: string[] = [];
  for (const part of Array.isArray(output) ? output.filter(isRecord) : []) {
    const text = stringField(part.text);
    if (TEXT_PART_TYPES.has(stringField(part.type) ?? "") && text !== undefined) texts.push(text);
    else
      throw unsupportedContent("A function_call_output can carry only text to a Gemini upstream.", "input");
  }
  return { output: texts.join("\n") };
}

/** The id Gemini issued for a call, or undefined (none, or one Deltagate minted). */
function issuedCallId(callId: string): string | undefined {
  return callId === "" || isMintedItemId(callId) ? undefined : callId;
}

/** What the translation produced. */
export interface GeminiConversation {
  /** `systemInstruction` texts, in order. */
  system: string[];
  contents: GeminiContent[];
}

/**
 * Translates the full turn context.
 * @param instructions the current turn's instructions (null/empty: none).
 * @param items the full context, oldest first, pairing validated.
 * @param origin the route's base URL: reasoning another upstream issued is left out.
 * @throws {UpstreamError} 400 for content or items a Gemini upstream cannot carry.
 */
export function toGeminiConversation(
  instructions: string | null | undefined,
  items: readonly Item[],
  origin: string,
): GeminiConversation {
  const system: string[] = instructions ? [instructions] : [];
  const contents: GeminiContent[] = [];
  const outputs = outputsByCallId(items);
  const names = new Map<string, string>();
  for (const item of items) {
    const callId = stringField((item as Fields).call_id);
    if (callId && item.type === "function_call") names.set(callId, callName(item as Fields));
  }
  const placed = new Set<string>();
  /** Call ids of the open model content not answered yet. */
  let pending: string[] = [];
  /** The signature the next model part carries (a reasoning item's `next`). */
  let signature: string | null = null;
  let opening = true;

  const push = (role: "user" | "model", parts: GeminiPart[]) => {
    if (parts.length === 0) return;
    if (role === "user") {
      flush();
      signature = null;
    } else if (signature !== null && parts[0]) {
      parts[0] = { ...parts[0], thoughtSignature: signature };
      signature = null;
    }
    const last = contents.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts: [...parts] });
  };
  const answer = (callId: string, output: unknown): GeminiPart => {
    const name = names.get(callId) ?? "";
    const id = issuedCallId(callId);
    return { functionResponse: { ...(id ? { id } : {}), name, response: responseOf(output) } };
  };
  /** Answers the open model content's calls right after it, in call order. */
  const flush = () => {
    const calls = pending;
    pending = [];
    const answers: GeminiPart[] = [];
    for (const id of calls) {
      if (placed.has(id) || !outputs.has(id)) continue;
      placed.add(id);
      answers.push(answer(id, outputs.get(id)));
    }
    if (answers.length > 0) contents.push({ role: "user", parts: answers });
  };

  items.forEach((item, index) => {
    const fields = item as Fields;
    if (item.type === "message") {
      const role = stringField(fields.role);
      if ((role === "system" || role === "developer") && opening) {
        const text = toParts(fields.content)
          .map((part) => ("text" in part ? part.text : ""))
          .join("\n");
        if (text !== "") system.push(text);
        return;
      }
      opening = false;
      push(role === "assistant" ? "model" : "user", toParts(fields.content));
      return;
    }
    opening = false;
    if (item.type === "function_call") {
      const callId = stringField(fields.call_id) ?? "";
      const id = issuedCallId(callId);
      const call = { ...(id ? { id } : {}), name: callName(fields), args: callArgs(fields) };
      push("model", [{ functionCall: call }]);
      pending.push(callId);
    } else if (item.type === "function_call_output") {
      flush(); // places this output and its siblings in call order
      const callId = stringField(fields.call_id) ?? "";
      if (placed.has(callId)) return;
      placed.add(callId);
      push("user", [answer(callId, fields.output)]);
    } else if (item.type === "reasoning") {
      const from = fields[ORIGIN_FIELD];
      if (typeof from === "string" && from !== origin) return;
      const state = openThoughts(fields.encrypted_content);
      if (!state) return;
      const held = signature;
      signature = null;
      push(
        "model",
        state.parts.map((part) => ({ ...part })),
      );
      signature = state.next ?? held;
    } else {
      throw unsupportedContent(
        `Input items of type '${item.type}' cannot be sent to a Gemini upstream.`,
        `input[${index}]`,
      );
    }
  });
  flush();
  return { system, contents };
}
