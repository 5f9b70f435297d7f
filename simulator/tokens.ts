/**
 * Token estimation for the simulator. There is no tokenizer: one token is counted per 4 bytes
 * of UTF-8 (rounded up), the usual rule of thumb for English text with BPE tokenizers. All
 * usage numbers, prefill delays and decode pacing in the simulator derive from this estimate.
 */
import { canonicalJson } from "./json.ts";

/** Estimated tokens of `text`: ceil(UTF-8 byte length / 4). Empty text → 0 tokens. */
export function estimateTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, "utf8") / 4);
}

/** Estimated tokens of a JSON value, measured on its canonical serialization. */
export function estimateJsonTokens(value: unknown): number {
  return estimateTokens(canonicalJson(value));
}
