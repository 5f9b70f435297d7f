/**
 * What a turn takes from its request: the input items (ids assigned, size-checked) and the
 * settings, both as stored and as forwarded upstream. The limits themselves are
 * src/protocol/size-limits.ts's.
 * Source: https://platform.openai.com/docs/api-reference/responses/create
 */
import { type CreateRequest, FORWARDED_SETTINGS, normalizeInput } from "../protocol/create-request.ts";
import type { StoredItem } from "../protocol/items.ts";
import type { Json } from "../protocol/json.ts";
import { checkItemSize } from "../protocol/size-limits.ts";
import { newItemId } from "../util/ids.ts";

/**
 * The request's input as items, each with an id (clients may omit them; stored items always have
 * one).
 * @throws {ApiError} 400 `item_too_large` (param `input[i]`) for an item over `MAX_ITEM_BYTES`
 *   of UTF-8 JSON.
 */
export function inputItems(request: CreateRequest): StoredItem[] {
  return normalizeInput(request.input).map((item, index) => {
    checkItemSize(JSON.stringify(item), index);
    return (item.id ? item : { ...item, id: newItemId(item.type) }) as StoredItem;
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
