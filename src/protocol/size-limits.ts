/**
 * Every size limit Deltagate enforces on what a client sends, in one place (docs/limits.md),
 * and their errors. All sizes are UTF-8 bytes (what travels and what SQLite stores), never UTF-16
 * code units. Owns the choice of the numbers:
 * - a request (HTTP body, WebSocket frame) ≤ 24 MiB: below the 32 MiB of a received WebSocket
 *   message (https://developers.cloudflare.com/durable-objects/platform/limits/) and of a Workers
 *   RPC call (the Worker hands the parsed body to the session Durable Object over RPC, which
 *   refuses more than 32 MiB), with room in a 128 MB isolate for the parsed copy and the upstream
 *   body;
 * - an input item ≤ 16 MiB: above OpenAI's own 10 MiB (10,485,760 characters) per string of
 *   `input`, so a tool output OpenAI accepts is accepted here (items larger than a 2 MB SQLite row
 *   are stored in pieces, src/store/large-values.ts);
 * - settings: `instructions` ≤ 512 KiB (Codex's base prompt is ~25 KB and it caps project docs at
 *   32 KiB), `tools` ≤ 512 KiB in all (dozens of MCP tools), `text` ≤ 128 KiB (a structured-output
 *   JSON schema), any other setting ≤ 16 KiB — so the settings, echoed in every Response object,
 *   stay well under one 2 MB row and one event.
 * Sources: https://platform.openai.com/docs/api-reference/responses/create,
 *   https://developers.cloudflare.com/durable-objects/platform/limits/
 */
import { ApiError, invalidRequest } from "./errors.ts";

const KiB = 1024;
const MiB = 1024 * KiB;

/** Largest WebSocket message the runtime delivers; a larger one closes the socket with 1009. */
export const MAX_WEBSOCKET_FRAME_BYTES = 32 * MiB;
/** Largest request: an HTTP body or a WebSocket frame. */
export const MAX_REQUEST_BYTES = 24 * MiB;
/** Largest input item (its JSON). */
export const MAX_ITEM_BYTES = 16 * MiB;
/** Largest `instructions`. */
export const MAX_INSTRUCTIONS_BYTES = 512 * KiB;
/** Largest `tools` array (its JSON). */
export const MAX_TOOLS_BYTES = 512 * KiB;
/** Largest `text` setting (its JSON). */
export const MAX_TEXT_BYTES = 128 * KiB;
/** Largest value of any other setting (`reasoning`, `tool_choice`, `include`, `user`…). */
export const MAX_OTHER_SETTING_BYTES = 16 * KiB;

const SETTING_LIMITS: Readonly<Record<string, number>> = {
  instructions: MAX_INSTRUCTIONS_BYTES,
  tools: MAX_TOOLS_BYTES,
  text: MAX_TEXT_BYTES,
};

/** The limit of a setting (wire name). */
export function settingLimit(name: string): number {
  return SETTING_LIMITS[name] ?? MAX_OTHER_SETTING_BYTES;
}

/** Any UTF-16 unit outside ASCII. */
const NON_ASCII = /[\u0080-\uffff]/;

/** UTF-8 length of `text` in bytes (a lone surrogate counts as the 3 bytes of U+FFFD). */
export function utf8Length(text: string): number {
  // ASCII text (most JSON) is one byte per unit: one native scan instead of a loop in JS.
  if (!NON_ASCII.test(text)) return text.length;
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) continue;
    if (unit < 0x800) bytes += 1;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 2; // a pair: 2 units, 4 bytes
        i++;
        continue;
      }
      bytes += 2;
    } else bytes += 2;
  }
  return bytes;
}

/** True when `text` takes more than `limit` UTF-8 bytes (cheap for clearly short or long text). */
export function exceedsBytes(text: string, limit: number): boolean {
  if (text.length > limit) return true;
  if (text.length * 3 <= limit) return false;
  return utf8Length(text) > limit;
}

/** 413 `request_too_large`: the HTTP body or WebSocket frame is over `MAX_REQUEST_BYTES`. */
export function requestTooLarge(): ApiError {
  return new ApiError(413, {
    type: "invalid_request_error",
    code: "request_too_large",
    message: `The request is larger than ${MAX_REQUEST_BYTES} bytes (${MAX_REQUEST_BYTES / MiB} MiB).`,
    param: null,
  });
}

/**
 * Checks one input item's size.
 * @param json the item's JSON text.
 * @throws {ApiError} 400 `item_too_large` naming the item (`input[3]`).
 */
export function checkItemSize(json: string, index: number): void {
  if (!exceedsBytes(json, MAX_ITEM_BYTES)) return;
  throw invalidRequest(
    `Input item ${index} is larger than ${MAX_ITEM_BYTES} bytes (${MAX_ITEM_BYTES / MiB} MiB) of JSON.`,
    `input[${index}]`,
    "item_too_large",
  );
}

/**
 * Checks the size of each setting present (strings by their text, other values by their JSON).
 * @throws {ApiError} 400 `string_above_max_length` (a string, as OpenAI names it) or
 *   `setting_too_large`, with `param` the setting's name.
 */
export function checkSettingSizes(settings: Readonly<Record<string, unknown>>): void {
  for (const [name, value] of Object.entries(settings)) {
    if (value === undefined || value === null) continue;
    const limit = settingLimit(name);
    const text = typeof value === "string" ? value : JSON.stringify(value);
    if (!exceedsBytes(text, limit)) continue;
    throw invalidRequest(
      typeof value === "string"
        ? `Invalid '${name}': string too long. Expected at most ${limit} bytes (UTF-8).`
        : `Invalid '${name}': larger than ${limit} bytes of JSON.`,
      name,
      typeof value === "string" ? "string_above_max_length" : "setting_too_large",
    );
  }
}
