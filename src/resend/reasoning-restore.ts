/**
 * Restores what the session holds of the reasoning items it returned (issue #18): a client that
 * did not ask for `include: ["reasoning.encrypted_content"]` gets reasoning items without their
 * encrypted content, and sends them back that way; the session kept the blob (src/upstream/
 * encrypted-reasoning.ts), so the item goes upstream as the upstream issued it, byte-exact — not
 * dropped from the context for lack of it.
 * Invariant: an item is restored only from a reasoning item with the same id that this session
 * returned (an output row) and that the caller may continue (`visible`: the tenant's session, the
 * store:false scope rule); anything else is left as the client sent it.
 */
import type { StoredItem } from "../protocol/items.ts";
import type { ConversationStore } from "../store/conversation-store.ts";

/**
 * `items` with each reasoning item that lacks `encrypted_content` replaced by the stored one of
 * the same id (the same array when nothing changed).
 * @param visible whether the caller may continue the response (by id) that returned the item.
 */
export function restoreReasoning(
  items: StoredItem[],
  store: Pick<ConversationStore, "returnedReasoning">,
  visible: (responseId: string) => boolean,
): StoredItem[] {
  let restored: StoredItem[] | null = null;
  items.forEach((item, index) => {
    if (item.type !== "reasoning") return;
    const encrypted = (item as { encrypted_content?: unknown }).encrypted_content;
    if (typeof encrypted === "string" && encrypted.length > 0) return;
    const held = store.returnedReasoning(item.id).find((row) => visible(row.responseId));
    if (!held) return;
    const heldBlob = (held.item as { encrypted_content?: unknown }).encrypted_content;
    if (typeof heldBlob !== "string" || heldBlob.length === 0) return;
    restored ??= [...items];
    restored[index] = held.item;
  });
  return restored ?? items;
}
