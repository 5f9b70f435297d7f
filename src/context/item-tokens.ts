/**
 * How many tokens an item (or the request's instructions and tools) takes in a model's context,
 * counted with the real tokenizer on the text the model reads, and a cheap upper bound of it that
 * needs no tokenizer. Owns the estimate, the bound, and the memos that make every count happen
 * at most once:
 * - per item: a count is kept on the item's row (`items.tokens`, counted-context.ts), so no later
 *   turn, awake or after hibernation, tokenizes that item again;
 * - per distinct instructions / tools text (`SettingsTokenMemo`): a session re-sends the same
 *   instructions and tools every turn; they are counted once per text.
 * The count is an estimate of what the upstream bills (providers add framing tokens and size
 * images by their pixels), close enough to enforce a context window: text is counted exactly,
 * each item adds `ITEM_FRAMING_TOKENS`, images use OpenAI's published tile costs, and parts or
 * items of other types count as their JSON text (an over-estimate, on the safe side).
 * Bound: a token covers at least one byte, and everything counted is text inside the item's JSON,
 * so `tokens ≤ UTF-8 bytes of the JSON + IMAGE_TOKENS × images` (`tokenBound`). Contexts whose
 * bound fits the window need no counting at all.
 * Source: https://cookbook.openai.com/examples/how_to_count_tokens_with_tiktoken (framing),
 *   https://platform.openai.com/docs/guides/images-vision#calculating-costs (image tokens).
 */
import type { Item } from "../protocol/items.ts";
import { isRecord } from "../protocol/json.ts";
import { utf8Length } from "../protocol/size-limits.ts";
import type { CountTokens } from "./tokenizer.ts";

/** Tokens of framing each item adds around its text (role and separators), per the cookbook. */
export const ITEM_FRAMING_TOKENS = 3;
/** Tokens of an `input_image` with `detail: "low"` (one 512 px tile's flat cost). */
export const LOW_DETAIL_IMAGE_TOKENS = 85;
/** Tokens assumed for any other `input_image` (a 1024×1024 image at high detail: 85 + 4 × 170). */
export const IMAGE_TOKENS = 765;

type Part = { type?: unknown; [field: string]: unknown };

const TEXT_FIELDS = ["text", "refusal"] as const;

function partTokens(part: unknown, count: CountTokens): number {
  if (typeof part === "string") return count(part);
  if (typeof part !== "object" || part === null) return 0;
  const p = part as Part;
  if (p.type === "input_image") return p.detail === "low" ? LOW_DETAIL_IMAGE_TOKENS : IMAGE_TOKENS;
  for (const field of TEXT_FIELDS) {
    const value = p[field];
    if (typeof value === "string") return count(value);
  }
  return count(JSON.stringify(part));
}

function contentTokens(content: unknown, count: CountTokens): number {
  if (typeof content === "string") return count(content);
  if (!Array.isArray(content)) return 0;
  let total = 0;
  for (const part of content) total += partTokens(part, count);
  return total;
}

/**
 * Counts one item: framing plus the text the model reads (message role and content, call name
 * and arguments, tool output, reasoning summary and content); other item types count as their
 * JSON without the Deltagate `id`.
 * @returns tokens (≥ `ITEM_FRAMING_TOKENS`).
 */
export function itemTokens(item: Item, count: CountTokens): number {
  const fields = item as Record<string, unknown>;
  switch (item.type) {
    case "message":
      return ITEM_FRAMING_TOKENS + count(String(fields.role)) + contentTokens(fields.content, count);
    case "function_call":
      return ITEM_FRAMING_TOKENS + count(String(fields.name)) + count(String(fields.arguments));
    case "function_call_output":
      return ITEM_FRAMING_TOKENS + contentTokens(fields.output, count);
    case "reasoning":
      return (
        ITEM_FRAMING_TOKENS + contentTokens(fields.summary, count) + contentTokens(fields.content, count)
      );
    default: {
      const { id: _id, ...rest } = fields;
      return ITEM_FRAMING_TOKENS + count(JSON.stringify(rest));
    }
  }
}

/**
 * UTF-8 length of a string in bytes, without encoding it (the one implementation,
 * src/protocol/size-limits.ts): lone surrogates count 3, as `TextEncoder` replaces them with U+FFFD.
 */
export { utf8Length };

function imageCount(content: unknown): number {
  if (!Array.isArray(content)) return 0;
  let images = 0;
  for (const part of content) {
    if (isRecord(part) && part.type === "input_image") images++;
  }
  return images;
}

/**
 * An upper bound of `itemTokens(item)` that needs no tokenizer.
 * @param bytes UTF-8 bytes of the item's JSON (with its `id`).
 * @returns tokens (≥ the count).
 */
export function tokenBound(item: Item, bytes: number): number {
  const fields = item as Record<string, unknown>;
  return bytes + IMAGE_TOKENS * (imageCount(fields.content) + imageCount(fields.output));
}

/**
 * Token counts of instructions and tool definitions, memoized per distinct text (a bounded,
 * least-recently-used map; the key is the text itself: the engine holds it anyway, and a JS map
 * hashes strings natively, so no digest is needed).
 */
export class SettingsTokenMemo {
  private readonly counts = new Map<string, number>();
  private readonly capacity: number;

  /** @param capacity distinct texts kept (default 32). */
  constructor(capacity = 32) {
    this.capacity = capacity;
  }

  /**
   * Tokens of `instructions` plus the JSON of `tools` (0 for absent ones), each counted once.
   * @param count the tokenizer; without it, texts not counted yet contribute their UTF-8 bytes
   *   (an upper bound), so the result is then a bound rather than a count.
   */
  tokens(instructions: string | null | undefined, tools: unknown, count?: CountTokens): number {
    let total = 0;
    if (instructions) total += ITEM_FRAMING_TOKENS + this.memo(instructions, count);
    if (Array.isArray(tools) && tools.length > 0) total += this.memo(JSON.stringify(tools), count);
    return total;
  }

  private memo(text: string, count: CountTokens | undefined): number {
    const hit = this.counts.get(text);
    if (hit !== undefined) {
      this.counts.delete(text);
      this.counts.set(text, hit);
      return hit;
    }
    if (!count) return utf8Length(text);
    const tokens = count(text);
    this.counts.set(text, tokens);
    if (this.counts.size > this.capacity) {
      const oldest = this.counts.keys().next();
      if (!oldest.done) this.counts.delete(oldest.value);
    }
    return tokens;
  }
}
