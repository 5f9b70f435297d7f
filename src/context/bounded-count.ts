/**
 * Token counting whose cost is bounded per byte of input, whatever the input.
 * Owns the cap on pre-token length. The `o200k_base` tokenizer first splits text into pre-tokens
 * with a regular expression (linear time), then runs byte-pair merging on each pre-token, and the
 * merging in `gpt-tokenizer` is quadratic in the pre-token's length: a run without spaces, digits
 * or punctuation changes (one repeated character, base64 of zeros, a progress bar, unbroken CJK)
 * is ONE pre-token, and 130 KB of it took 37 s (1 MB: about half an hour).
 * Bound: no pre-token longer than `MAX_PIECE_BYTES` UTF-8 bytes reaches the merging; a longer one
 * is cut into chunks of at most that many bytes (at code point boundaries), each counted on its
 * own. Merging a chunk costs O(MAX_PIECE_BYTES) per byte, so a count costs
 * O(bytes × MAX_PIECE_BYTES) at worst: measured (bench/tokenizer.ts, a loaded 2-core machine)
 * 1.5–2.5 µs per byte for random letters or CJK without breaks, the worst shapes, about what
 * random short words cost with no long pre-token at all, against 0.1–0.5 µs per byte for prose
 * and code and under 0.1 µs for runs of one character.
 * Exactness: text whose pre-tokens all fit the cap is counted exactly (the same count as the
 * tokenizer alone); prose, code, JSON and Markdown (including table padding of a few hundred
 * spaces or dashes) stay under it. A longer pre-token's count is an estimate: the sum of its
 * chunks' counts, at most a few tokens per chunk above the exact count, and never above its bytes
 * (so the `tokenBound` upper bound of item-tokens.ts still holds).
 * Why cutting between pre-tokens keeps the count exact: pre-tokens are merged independently, and
 * the split expression has no look-behind and one look-ahead (`\s+(?!\S)`), which at the end of a
 * slice matches the same span it matched in the whole text; so the slices between two pre-tokens
 * split into the same pre-tokens as the whole text did.
 * Source: https://github.com/openai/tiktoken (the `o200k_base` split pattern and BPE),
 * https://github.com/niieani/gpt-tokenizer (src/BytePairEncodingCore.ts, the quadratic merge).
 */
import { O200K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/encodingParams/constants";

/** The longest pre-token, in UTF-8 bytes, counted by byte-pair merging as one piece. */
export const MAX_PIECE_BYTES = 512;

/**
 * A pre-token over `MAX_PIECE_BYTES` bytes spans more than `MAX_PIECE_BYTES / 3` UTF-16 code units
 * (no code unit encodes to more than 3 bytes), so a run of this many characters in one class
 * (see `mayHoldLongPiece`) is needed for one to exist.
 */
const LONG_RUN = Math.floor(MAX_PIECE_BYTES / 3);

/** Counts the tokens of a string with the tokenizer alone. */
export type CountExact = (text: string) => number;

/**
 * A cheap, conservative scan: false only when no pre-token of `text` can exceed `MAX_PIECE_BYTES`
 * (then the tokenizer can count it directly). Every `o200k_base` pre-token is either at most 3
 * digits, or whitespace only, or one optional leading character followed by characters that are
 * neither ASCII digits nor horizontal whitespace (letters, marks, punctuation, CR, LF, `/`). The
 * scan tracks the current run of each class; a non-ASCII character extends both, since it may be
 * a letter, punctuation or whitespace.
 */
export function mayHoldLongPiece(text: string): boolean {
  if (text.length <= LONG_RUN) return false;
  let word = 0;
  let space = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x30 && c <= 0x39) {
      word = 0;
      space = 0;
      continue;
    }
    if (c === 0x20 || c === 0x09 || c === 0x0b || c === 0x0c) {
      word = 0;
      space++;
    } else if (c === 0x0a || c === 0x0d || c >= 0x80) {
      word++;
      space++;
    } else {
      word++;
      space = 0;
    }
    if (word >= LONG_RUN || space >= LONG_RUN) return true;
  }
  return false;
}

/** UTF-8 bytes of the code point at `i` and its UTF-16 width. */
function codePointAt(text: string, i: number): { bytes: number; width: number } {
  const c = text.charCodeAt(i);
  if (c < 0x80) return { bytes: 1, width: 1 };
  if (c < 0x800) return { bytes: 2, width: 1 };
  if (c >= 0xd800 && c < 0xdc00 && i + 1 < text.length) {
    const next = text.charCodeAt(i + 1);
    if (next >= 0xdc00 && next < 0xe000) return { bytes: 4, width: 2 };
  }
  return { bytes: 3, width: 1 };
}

/** Whether `piece` is longer than `MAX_PIECE_BYTES` UTF-8 bytes. */
function isLong(piece: string): boolean {
  if (piece.length <= LONG_RUN) return false;
  let bytes = 0;
  for (let i = 0; i < piece.length; ) {
    const { bytes: size, width } = codePointAt(piece, i);
    bytes += size;
    if (bytes > MAX_PIECE_BYTES) return true;
    i += width;
  }
  return false;
}

/** Counts a long pre-token as consecutive chunks of at most `MAX_PIECE_BYTES` bytes each. */
function countChunked(piece: string, countExact: CountExact): number {
  let total = 0;
  let start = 0;
  let bytes = 0;
  for (let i = 0; i < piece.length; ) {
    const { bytes: size, width } = codePointAt(piece, i);
    if (bytes + size > MAX_PIECE_BYTES) {
      total += countExact(piece.slice(start, i));
      start = i;
      bytes = 0;
    }
    bytes += size;
    i += width;
  }
  return total + countExact(piece.slice(start));
}

/**
 * Counts `text` pre-token by pre-token: runs of pre-tokens within the cap are counted together
 * (exactly), longer pre-tokens chunk by chunk (an estimate).
 */
export function countByPieces(text: string, countExact: CountExact): number {
  let total = 0;
  let pending = 0;
  for (const match of text.matchAll(O200K_TOKEN_SPLIT_REGEX)) {
    const piece = match[0];
    if (!isLong(piece)) continue;
    if (match.index > pending) total += countExact(text.slice(pending, match.index));
    total += countChunked(piece, countExact);
    pending = match.index + piece.length;
  }
  if (pending === 0) return countExact(text);
  return pending < text.length ? total + countExact(text.slice(pending)) : total;
}

/**
 * Wraps the tokenizer so no input costs more than the bound above per byte.
 * @returns a counter equal to `countExact` on text whose pre-tokens fit the cap.
 */
export function boundedCounter(countExact: CountExact): CountExact {
  return (text) => {
    if (text === "") return 0;
    return mayHoldLongPiece(text) ? countByPieces(text, countExact) : countExact(text);
  };
}
