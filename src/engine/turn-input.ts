/**
 * What a turn takes from its request: the input items (ids assigned, size-checked) and the
 * settings, both as stored and as forwarded upstream (the size limits are src/protocol/size-limits.ts's).
 * An id Deltagate assigns is a minted one (src/util/ids.ts), so it never goes upstream as if the
 * upstream had issued it (src/upstream/item-conversion.ts); Deltagate's origin mark on reasoning
 * items (src/upstream/encrypted-reasoning.ts) is removed from what a client sends, so only items
 * an upstream streamed carry it.
 * Source: https://platform.openai.com/docs/api-reference/responses/create
 */
import { type CreateRequest, FORWARDED_SETTINGS, normalizeInput } from "../protocol/create-request.ts";
import type { StoredItem } from "../protocol/items.ts";
import type { Json } from "../protocol/json.ts";
import { checkItemSize } from "../protocol/size-limits.ts";
import { ORIGIN_FIELD } from "../upstream/encrypted-reasoning.ts";
import { newItemId } from "../util/ids.ts";

/**
 * The request's input as items, each with an id (clients may omit them; stored items always have
 * one).
 * @throws {ApiError} 400 `item_too_large` (param `input[i]`) for an item over `MAX_ITEM_BYTES`
 *   of UTF-8 JSON.
 */
export function inputItems(request: Pick<CreateRequest, "input">): StoredItem[] {
  return normalizeInput(request.input).map((item, index) => {
    checkItemSize(JSON.stringify(item), index);
    const { [ORIGIN_FIELD]: _mark, ...own } = item as Record<string, unknown>;
    const kept = (ORIGIN_FIELD in item ? own : item) as typeof item;
    return (kept.id ? kept : { ...kept, id: newItemId(kept.type) }) as StoredItem;
  });
}

/** The settings sent upstream, by wire name (absent and null ones left out). */
export function forwardedSettings(request: CreateRequest): Record<string, Json> {
  const settings: Record<string, Json> = {};
  for (const key of FORWARDED_SETTINGS) {
    const value = request[key];
    if (value !== undefined && value !== null) settings[key] = value as Json;
  }
  return settings;
}

/** The settings stored with the response and echoed on its Response object. */
export function storedSettings(request: CreateRequest): Record<string, Json> {
  const settings: Record<string, Json> = { ...forwardedSettings(request) };
  if (request.metadata) settings.metadata = request.metadata;
  return settings;
}
