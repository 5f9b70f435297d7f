/**
 * The wire of OpenAI's Conversations API (docs/conversations.md): the bodies and queries of its
 * routes, validated once by the Worker (unknown fields refused, `unknown_parameter`), and the
 * conversation object. Owns its limits: at most `MAX_ITEMS_PER_REQUEST` items per create or add
 * ("Initial items to include in the conversation context. You may add up to 20 items at a time."),
 * `metadata` as on a response (16 pairs, keys ≤ 64 characters, values ≤ 512), a page of 1–100
 * items (20 by default), newest first by default.
 * Source: https://platform.openai.com/docs/api-reference/conversations
 */
import { z } from "zod";
import { metadata } from "./create-request.ts";
import { type Item, inputItem, type StoredItem } from "./items.ts";

/** Items per `POST /v1/conversations` or `POST …/items` (OpenAI's limit). */
export const MAX_ITEMS_PER_REQUEST = 20;

const items = z.array(inputItem).max(MAX_ITEMS_PER_REQUEST);

/** `POST /v1/conversations`. */
export const createConversationRequest = z.strictObject({
  items: items.nullish(),
  metadata: metadata.nullish(),
});
export type CreateConversationRequest = z.infer<typeof createConversationRequest>;

/** `POST /v1/conversations/{id}`: the metadata replaces the conversation's. */
export const updateConversationRequest = z.strictObject({ metadata });
export type UpdateConversationRequest = z.infer<typeof updateConversationRequest>;

/** `POST /v1/conversations/{id}/items`. */
export const addItemsRequest = z.strictObject({ items: items.min(1) });
export type AddItemsRequest = z.infer<typeof addItemsRequest>;

/** The query of `GET /v1/conversations/{id}/items`. */
export const listItemsQuery = z.object({
  after: z.string().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  order: z.enum(["asc", "desc"]).default("desc"),
});
export type ListItemsQuery = z.infer<typeof listItemsQuery>;

/**
 * An item as a conversation keeps it: a message's text content as a content part (`input_text`,
 * an assistant's `output_text`) and a `status`, as OpenAI lists conversation messages.
 */
export function conversationItem(item: Item, id: string): StoredItem {
  if (item.type !== "message") return { ...item, id } as StoredItem;
  const message = item as Item & { role: string; content: unknown; status?: string };
  const content =
    typeof message.content === "string"
      ? [{ type: message.role === "assistant" ? "output_text" : "input_text", text: message.content }]
      : message.content;
  return { ...message, id, content, status: message.status ?? "completed" } as StoredItem;
}

/** The conversation object. */
export function conversationObject(record: {
  id: string;
  metadata: Record<string, string>;
  createdAt: number;
}): Record<string, unknown> {
  return {
    id: record.id,
    object: "conversation",
    created_at: Math.floor(record.createdAt / 1000),
    metadata: record.metadata,
  };
}
