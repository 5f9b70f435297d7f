/**
 * Structural limits on client JSON (HTTP bodies and WebSocket frames), checked on the text
 * before it is parsed. Owns the nesting-depth limit.
 * Why before parsing: `JSON.parse` accepts any depth (10 million levels of `[` take it about
 * 13 s), and everything after it that walks the value recursively (zod's JSON schema,
 * `JSON.stringify`) overflows the stack long before that (10,000 levels were a 500). The scan
 * below is one linear pass with a counter, no recursion, so no input can overflow it.
 * Invariant: a text accepted here parses (if it is JSON at all) into a value nested at most
 * `MAX_JSON_DEPTH` levels deep (`{}` and `[]` at the top are level 1).
 */
import { invalidRequest } from "./errors.ts";

/**
 * Deepest nesting of objects and arrays a client may send. Generous for real payloads: the
 * deepest are JSON schemas (`tools[i].parameters`, `text.format.schema`), where each schema level
 * takes two JSON levels (`properties`, then the property), and OpenAI's Structured Outputs allow
 * only a few levels of schema nesting; items and their content parts take about 5 levels.
 * Source: https://platform.openai.com/docs/guides/structured-outputs (schema limits).
 */
export const MAX_JSON_DEPTH = 64;

/** How many leading path segments an error names (`input[3].content`). */
const PATH_SEGMENTS = 3;
/** Longest key quoted in an error's `param`. */
const MAX_KEY_CHARS = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** One of the outermost containers, enough to name where a too-deep value sits. */
interface Frame {
  array: boolean;
  /** Array: index of the current element. */
  index: number;
  /** Object: key of the current member (null until its key was read). */
  key: string | null;
  /** Object: the next string is a key (after `{` or `,`). */
  expectKey: boolean;
}

function keyOf(quoted: string): string {
  let key: string;
  try {
    key = JSON.parse(quoted) as string;
  } catch {
    key = quoted.slice(1, -1);
  }
  return key.length > MAX_KEY_CHARS ? `${key.slice(0, MAX_KEY_CHARS)}…` : key;
}

function formatPath(frames: readonly Frame[]): string {
  let out = "";
  for (const frame of frames) {
    if (frame.array) out += `[${frame.index}]`;
    else if (frame.key === null) break;
    else out += out ? `.${frame.key}` : frame.key;
  }
  return out;
}

/**
 * The index of the quote that closes a string whose content starts at `from` (the first quote
 * not escaped, i.e. not preceded by an odd run of backslashes), or `text.length` when the string
 * is not closed. Long strings (tool outputs) are skipped by native `indexOf` jumps, not char by char.
 */
function closingQuote(text: string, from: number): number {
  for (let at = text.indexOf('"', from); at !== -1; at = text.indexOf('"', at + 1)) {
    let backslashes = 0;
    for (let j = at - 1; j >= from && text.charCodeAt(j) === BACKSLASH; j--) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
  return text.length;
}

/**
 * Finds where `text` nests objects/arrays deeper than `maxDepth`, without parsing it.
 * Brackets inside strings are skipped; the text need not be valid JSON (parsing reports that).
 * @returns null within the limit, else the path (its first segments) of the container that
 *   holds the too-deep value, e.g. `tool_choice[0][0]` or `input[2].output` ("" at the top).
 */
export function jsonDepthExceeded(text: string, maxDepth: number = MAX_JSON_DEPTH): string | null {
  const frames: Frame[] = [];
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const start = i;
      i = closingQuote(text, i + 1);
      const frame = depth <= PATH_SEGMENTS ? frames[depth - 1] : undefined;
      if (frame && !frame.array && frame.expectKey) {
        frame.key = keyOf(text.slice(start, i + 1));
        frame.expectKey = false;
      }
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth++;
      if (depth > maxDepth) return formatPath(frames);
      if (depth <= PATH_SEGMENTS) {
        frames.push({ array: c === OPEN_ARRAY, index: 0, key: null, expectKey: c === OPEN_OBJECT });
      }
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (depth > 0 && depth <= PATH_SEGMENTS) frames.pop();
      if (depth > 0) depth--;
    } else if (c === COMMA) {
      const frame = depth <= PATH_SEGMENTS ? frames[depth - 1] : undefined;
      if (frame?.array) frame.index++;
      else if (frame) frame.expectKey = true;
    }
  }
  return null;
}

/**
 * Parses client JSON within the structural limits.
 * @throws {ApiError} 400 `invalid_request_error`: code `invalid_value` with `param` naming the
 *   field when it nests deeper than `MAX_JSON_DEPTH`; code `invalid_json` when it is not JSON.
 */
export function parseClientJson(text: string, what: "request body" | "frame" = "request body"): unknown {
  const deep = jsonDepthExceeded(text);
  if (deep !== null) {
    const where = deep ? `Invalid value for '${deep}': ` : "";
    throw invalidRequest(
      `${where}JSON nested deeper than ${MAX_JSON_DEPTH} levels is not accepted.`,
      deep || null,
      "invalid_value",
    );
  }
  try {
    return JSON.parse(text);
  } catch {
    throw invalidRequest(
      what === "frame" ? "The frame is not valid JSON." : "The request body is not valid JSON.",
      null,
      "invalid_json",
    );
  }
}
