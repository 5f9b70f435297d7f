/**
 * Item references (issue #18): an `{"type": "item_reference", "id": …}` input item stands for an
 * item stored earlier, by id, as on OpenAI's API. The Vercel AI SDK's Responses model sends every
 * reasoning item and every earlier answer it got back from a store:true response that way
 * (@ai-sdk/openai `convert-to-openai-responses-input.ts`), so a tool loop with a reasoning model,
 * or any second turn of a chat, is a resend made partly of references. The session replaces each
 * reference with the item it holds under that id, exactly as stored (a reasoning item with its
 * encrypted content, byte-exact), before anything reads the input: the transparent-delta match
 * then sees the items the chain holds, and the upstream gets whole items either way.
 * Invariant: a reference resolves only to an item of a response the caller may continue
 * (`visible`: the tenant's session, the store:false scope rule of src/session/scope.ts) — an
 * id from another tenant, another socket's store:false chain or a deleted response is not found,
 * as OpenAI answers it (404, `Item with id '…' not found.`, param `input`). Deltagate keeps no
 * index across sessions: a reference resolves in the session the request reaches (the one its
 * `previous_response_id`, session header or conversation's affinity names: src/worker/affinity.ts).
 * Source: https://platform.openai.com/docs/api-reference/responses/create (input, item reference).
 */
import { ApiError } from "../protocol/errors.ts";
import type { Item, StoredItem } from "../protocol/items.ts";
import type { ConversationStore } from "../store/conversation-store.ts";

/** The `type` of an item reference. */
export const ITEM_REFERENCE = "item_reference";

/** Longest id quoted back in the not-found message. */
const MAX_QUOTED_ID = 128;

/** Whether `item` is an item reference (it carries only the id of the item it names). */
export function isItemReference(item: Item): boolean {
  return item.type === ITEM_REFERENCE;
}

/** OpenAI's answer to a reference it cannot resolve (404, param `input`). */
export function itemNotFound(id: string): ApiError {
  const quoted = id.length > MAX_QUOTED_ID ? `${id.slice(0, MAX_QUOTED_ID)}…` : id;
  return new ApiError(404, {
    type: "invalid_request_error",
    code: null,
    message: `Item with id '${quoted}' not found.`,
    param: "input",
  });
}

/**
 * `items` with each item reference replaced by the item the session holds under its id, from
 * the newest response the caller may continue (the same array when there is no reference).
 * @param visible whether the caller may continue the response (by id) that holds the item.
 * @throws {ApiError} 404 `Item with id '…' not found.` for a reference that names no such item.
 */
export function resolveReferences(
  items: StoredItem[],
  store: Pick<ConversationStore, "heldItems">,
  visible: (responseId: string) => boolean,
): StoredItem[] {
  let resolved: StoredItem[] | null = null;
  items.forEach((item, index) => {
    if (!isItemReference(item)) return;
    const held = store.heldItems(item.id).find((row) => visible(row.responseId));
    if (!held || isItemReference(held.item)) throw itemNotFound(item.id);
    resolved ??= [...items];
    resolved[index] = held.item;
  });
  return resolved ?? items;
}
