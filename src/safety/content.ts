/**
 * What of a turn gets classified, as plain text: the strings of an item, of `instructions` and of
 * a tool definition, cut into pieces a classifier accepts; and the SHA-256 content hash verdicts
 * are cached under. Owns which fields count as content: identifiers and structure (`id`,
 * `call_id`, `type`, `status`, `role`…), encrypted reasoning, logprobs, annotations and inline
 * file or image data (`data:` URLs, `file_data`) are not text a classifier can judge; image URLs
 * are (the URL is what the model will fetch).
 * Invariant: the same item always yields the same texts (a stable order), so its hashes are
 * stable across turns, sessions and restarts.
 */
import { toHex } from "../crypto/encoding.ts";
import { sha256 } from "../crypto/keys.ts";
import { isRecord } from "../protocol/json.ts";

/** Largest piece of text sent to a classifier, in UTF-16 code units (longer texts are split). */
export const MAX_TEXT_CHARS = 20_000;

/** Fields that are never content. */
const STRUCTURAL = new Set([
  "id",
  "type",
  "status",
  "call_id",
  "item_id",
  "role",
  "name",
  "encrypted_content",
  "logprobs",
  "annotations",
  "file_id",
  "file_data",
  "detail",
  "strict",
  "format",
]);

/** Every content string under `value`, depth first, in key order. */
function collect(value: unknown, out: string[], depth = 0): void {
  if (depth > 32) return;
  if (typeof value === "string") {
    if (value.length > 0 && !value.startsWith("data:")) out.push(value);
    return;
  }
  if (Array.isArray(value)) {
    for (const element of value) collect(element, out, depth + 1);
    return;
  }
  if (isRecord(value)) {
    for (const [key, field] of Object.entries(value)) {
      if (!STRUCTURAL.has(key)) collect(field, out, depth + 1);
    }
  }
}

/** Every content string under `value` (an item, a content part, an output list), in order. */
export function contentStrings(value: unknown): string[] {
  const strings: string[] = [];
  collect(value, strings);
  return strings;
}

/** `text` cut into pieces of at most `MAX_TEXT_CHARS`. */
export function pieces(text: string): string[] {
  if (text.length <= MAX_TEXT_CHARS) return text.length > 0 ? [text] : [];
  const out: string[] = [];
  for (let i = 0; i < text.length; i += MAX_TEXT_CHARS) out.push(text.slice(i, i + MAX_TEXT_CHARS));
  return out;
}

/** The content of an item (message text, tool output, call arguments, image URL…), joined. */
export function itemText(item: unknown): string {
  const strings: string[] = [];
  collect(item, strings);
  return strings.join("\n");
}

/**
 * The content of a tool definition: its name, description and parameter schema (the
 * descriptions a model reads), joined.
 */
export function toolText(tool: unknown): string {
  const strings: string[] = [];
  if (isRecord(tool) && typeof tool.name === "string") {
    strings.push(tool.name);
  }
  collect(tool, strings);
  return strings.join("\n");
}

/** Hex SHA-256 of `text` (UTF-8). */
export async function sha256Hex(text: string): Promise<string> {
  return toHex(await sha256(text));
}

/**
 * A deterministic sample of content by its hash: true for about `rate` (0–1) of all hashes, and
 * always the same answer for the same content (so a sampled text is checked in every session).
 */
export function sampled(hash: string, rate: number): boolean {
  const bucket = Number.parseInt(hash.slice(0, 8), 16) / 0x1_0000_0000;
  return bucket < rate;
}
