/**
 * Item conversion for the Responses-API upstreams (HTTP and WebSocket mode): what of a stored item
 * goes upstream. Invariant: Deltagate's own item ids never go upstream (the upstream never saw
 * them); reasoning item ids are the upstream's own (never re-keyed, src/engine/rekey.ts) and stay.
 */
import type { Item } from "../protocol/items.ts";

/** The item as sent upstream. */
export function toUpstreamItem(item: Item): Item {
  if (item.type === "reasoning") return item;
  const { id: _id, ...rest } = item;
  return rest as Item;
}
