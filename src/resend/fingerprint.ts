/**
 * What makes two items "the same item" for transparent deltas (src/resend/): an item's
 * fingerprint is the hash of its canonical form — what the model sees of it — so a client that
 * resends an item Deltagate returned (or one it sent before) matches it although its SDK
 * re-serialized it. Owns the canonical form:
 * - keys sorted; `id`, `status` and Deltagate's origin mark left out (ids are compared apart, by
 *   the matcher, wherever the client sends one: src/resend/match.ts);
 * - a message's string `content` is one text part; `input_text` / `output_text` parts are `text`
 *   parts; a text part's `annotations` and `logprobs` (output metadata the model never reads back)
 *   are left out; `type` is `message` when a client left it out;
 * - a `reasoning` item is its id alone: its content (the encrypted blob, the summary) is the
 *   session's to restore byte-exact (src/resend/reasoning-restore.ts), whatever the client sends.
 * Everything else (roles, text, images, call ids, names, arguments, outputs, unknown fields)
 * counts: any difference in what the model would read makes the fingerprints differ.
 * Also owns the settings key: everything of a request but its input (model, `store`, every
 * forwarded setting, `metadata`), as Codex compares requests before sending a delta
 * (openai/codex codex-rs/core/src/client.rs `get_incremental_items`, PR #11343).
 */
import type { CreateRequest } from "../protocol/create-request.ts";
import type { Item } from "../protocol/items.ts";
import { ORIGIN_FIELD } from "../upstream/encrypted-reasoning.ts";
import { hash128 } from "../util/hash128.ts";

const ITEM_IGNORED: ReadonlySet<string> = new Set(["id", "status", ORIGIN_FIELD]);
const PART_IGNORED: ReadonlySet<string> = new Set(["annotations", "logprobs"]);
const TEXT_PARTS: ReadonlySet<string> = new Set(["input_text", "output_text", "text"]);

/** Appends the canonical JSON of `value` (sorted keys, `skip`ped top-level keys) to `out`. */
function canonical(value: unknown, out: string[], skip?: ReadonlySet<string>): void {
  if (value === null || typeof value !== "object") {
    out.push(JSON.stringify(value) ?? "null");
    return;
  }
  if (Array.isArray(value)) {
    out.push("[");
    value.forEach((element, index) => {
      if (index > 0) out.push(",");
      canonical(element, out);
    });
    out.push("]");
    return;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((key) => record[key] !== undefined && !skip?.has(key))
    .sort();
  out.push("{");
  keys.forEach((key, index) => {
    if (index > 0) out.push(",");
    out.push(JSON.stringify(key), ":");
    canonical(record[key], out);
  });
  out.push("}");
}

/** A message content part as the model reads it. */
function canonicalPart(part: unknown, out: string[]): void {
  const record = part as Record<string, unknown>;
  if (typeof record?.type === "string" && TEXT_PARTS.has(record.type)) {
    const { type: _type, annotations: _a, logprobs: _l, ...rest } = record;
    canonical({ ...rest, type: "text" }, out, PART_IGNORED);
    return;
  }
  canonical(part, out);
}

/**
 * The fingerprint (32 hex characters) of an item as the model reads it: equal for an item and a
 * client's re-serialization of it, different for any change the model would see.
 */
export function itemFingerprint(item: Item): string {
  const record = item as Record<string, unknown>;
  if (record.type === "reasoning" && typeof record.id === "string") {
    return hash128(`reasoning\u0000${record.id}`);
  }
  const out: string[] = [];
  if (record.type === "message" || record.type === undefined) {
    const content = record.content;
    const { content: _c, type: _t, ...rest } = record;
    out.push("message\u0000");
    canonical(rest, out, ITEM_IGNORED);
    out.push("\u0000[");
    if (typeof content === "string") canonicalPart({ type: "text", text: content }, out);
    else if (Array.isArray(content)) {
      content.forEach((part, index) => {
        if (index > 0) out.push(",");
        canonicalPart(part, out);
      });
    } else canonical(content, out);
    out.push("]");
  } else {
    canonical(record, out, ITEM_IGNORED);
  }
  return hash128(out.join(""));
}

/**
 * The settings key (32 hex characters) of a request: its model, `store` and every setting but
 * its input and its chaining. Two requests may continue one chain only with equal keys.
 * @param settings the request's stored settings (src/engine/turn-input.ts `storedSettings`).
 */
export function settingsKey(request: Pick<CreateRequest, "model" | "store">, settings: unknown): string {
  const out: string[] = [];
  canonical({ model: request.model, store: request.store ?? true, settings }, out);
  return hash128(out.join(""));
}
