/**
 * Item conversion for the Responses-API upstreams (HTTP and WebSocket mode): what of the stored
 * items goes upstream. Owns which ids and which reasoning items are sent.
 * Invariants:
 * - an id goes upstream only where the upstream needs it and issued it: a `reasoning` item's own
 *   id (never re-keyed, src/engine/rekey.ts) and the id of the item right after such a reasoning
 *   item (kept from the upstream by rekey.ts). An id Deltagate minted (src/util/ids.ts
 *   `isMintedItemId`: an item the client sent without one, an upstream item re-keyed) never does;
 * - a reasoning item is sent as stored (its `encrypted_content` byte-exact), without Deltagate's
 *   origin mark, and only when the upstream can use it: with its `encrypted_content`, unless it
 *   was issued by another upstream (encrypted-reasoning.ts `ORIGIN_FIELD`); or, to an upstream
 *   that stores responses, by its id, together with the id of the item that followed it. Anything
 *   else is left out: a `store: false` upstream answers a reasoning item it cannot resolve with
 *   404 `Item with id 'rs_…' not found.`, and one with another provider's encrypted content with
 *   `invalid_encrypted_content`.
 * Sources: https://platform.openai.com/docs/guides/reasoning#encrypted-reasoning-items (replay
 * the items as returned), https://github.com/mastra-ai/mastra/issues/11103 (a reasoning item sent
 * by id needs its following item with its id), https://github.com/maximhq/bifrost/issues/5186 (a
 * reasoning item under an id the upstream did not issue: `Encrypted content item_id did not match
 * the target item id`), https://github.com/router-for-me/CLIProxyAPI/issues/2381 (404 under
 * `store: false`).
 */
import type { Item } from "../protocol/items.ts";
import { isMintedItemId } from "../util/ids.ts";
import { ORIGIN_FIELD } from "./encrypted-reasoning.ts";

/** The upstream the items go to. */
export interface ReplayTarget {
  /** Its base URL: reasoning another upstream issued is not sent to it. */
  origin: string;
  /** It stores responses, so it resolves a reasoning item by id (`upstream_store`). */
  resolvesIds: boolean;
}

type Fields = Record<string, unknown>;

/** An id the upstream (or the client) issued, or null. */
function issuedId(item: Item | undefined): string | null {
  const id = (item as Fields | undefined)?.id;
  return typeof id === "string" && !isMintedItemId(id) ? id : null;
}

function withoutId(item: Item): Item {
  const { id: _id, ...rest } = item;
  return rest as Item;
}

/** The reasoning item as sent to `target`, or null when it is left out. */
function reasoningForUpstream(item: Item, next: Item | undefined, target: ReplayTarget): Item | null {
  const { [ORIGIN_FIELD]: origin, ...rest } = item as Fields;
  if (typeof origin === "string" && origin !== target.origin) return null;
  const sent = (issuedId(item) === null ? withoutId(rest as Item) : rest) as Item;
  if (typeof rest.encrypted_content === "string") return sent;
  const byId = target.resolvesIds && issuedId(item) !== null && issuedId(next) !== null;
  return byId ? sent : null;
}

/**
 * A compaction item as sent to `target` (without Deltagate's origin mark and minted id), or null
 * when another upstream issued it (it could not read it; `invalid_encrypted_content`). Deltagate's
 * own compaction items never get here: the compaction stage expands them (src/compaction/).
 */
function compactionForUpstream(item: Item, target: ReplayTarget): Item | null {
  const { [ORIGIN_FIELD]: origin, ...rest } = item as Fields;
  if (typeof origin === "string" && origin !== target.origin) return null;
  return (issuedId(item) === null ? withoutId(rest as Item) : rest) as Item;
}

/** The items as sent to `target`, in order (see the module invariants). */
export function toUpstreamItems(items: readonly Item[], target: ReplayTarget): Item[] {
  const sent: Item[] = [];
  let keepId = false;
  items.forEach((item, index) => {
    if (item.type === "compaction") {
      const compaction = compactionForUpstream(item, target);
      if (compaction) sent.push(compaction);
      keepId = false;
      return;
    }
    if (item.type === "reasoning") {
      const reasoning = reasoningForUpstream(item, items[index + 1], target);
      if (reasoning) sent.push(reasoning);
      keepId = reasoning !== null && issuedId(item) !== null;
      return;
    }
    sent.push(keepId && issuedId(item) !== null ? item : withoutId(item));
    keepId = false;
  });
  return sent;
}
