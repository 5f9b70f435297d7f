/**
 * The HTTP handlers of the Conversations API in the session Durable Object that holds the
 * conversations (docs/conversations.md): one per route of the Worker's route table
 * (src/worker/conversations-routes.ts), after the session's one tenant check — so another
 * tenant's conversation id, which names this object, is not found on every route. Bodies and
 * queries arrive validated (src/protocol/conversation-requests.ts); storage is
 * src/store/conversations.ts.
 * Source: https://platform.openai.com/docs/api-reference/conversations
 */
import { listedItems } from "../engine/response-object.ts";
import {
  type AddItemsRequest,
  type CreateConversationRequest,
  conversationItem,
  conversationObject,
  type ListItemsQuery,
  type UpdateConversationRequest,
} from "../protocol/conversation-requests.ts";
import { ApiError, conversationNotFound, invalidRequest } from "../protocol/errors.ts";
import type { StoredItem } from "../protocol/items.ts";
import type { Conversations } from "../store/conversations.ts";
import { newConversationId, newItemId } from "../util/ids.ts";

/** Collaborators of the handlers. */
export interface ConversationsHttpDeps {
  conversations: Conversations;
  /** Hex id of this Durable Object (named by each conversation id). */
  ownerId: string;
  now(): number;
}

/** A listing's `include` (e.g. `reasoning.encrypted_content`). */
export type Includes = readonly string[];

/** One call on an existing conversation, as the Worker's routes send it (session-do.ts `conversationCall`). */
export type ConversationCall =
  | { route: "retrieve" }
  | { route: "update"; body: UpdateConversationRequest }
  | { route: "delete" }
  | { route: "add_items"; body: AddItemsRequest; include: Includes }
  | { route: "list_items"; query: ListItemsQuery; include: Includes }
  | { route: "retrieve_item"; itemId: string; include: Includes }
  | { route: "delete_item"; itemId: string };

/** The Conversations API of one session. */
export class ConversationsHttp {
  private readonly deps: ConversationsHttpDeps;

  constructor(deps: ConversationsHttpDeps) {
    this.deps = deps;
  }

  /** `POST /v1/conversations`: the new conversation with its first items. */
  create(body: CreateConversationRequest): Response {
    const record = {
      id: newConversationId(this.deps.ownerId),
      metadata: body.metadata ?? {},
      createdAt: this.deps.now(),
    };
    this.deps.conversations.create(record, withIds(body.items ?? []));
    return Response.json(conversationObject(record));
  }

  /** `GET /v1/conversations/{id}`. */
  retrieve(id: string): Response {
    return Response.json(conversationObject(this.existing(id)));
  }

  /** `POST /v1/conversations/{id}`: replaces its metadata. */
  update(id: string, body: UpdateConversationRequest): Response {
    if (!this.deps.conversations.setMetadata(id, body.metadata)) throw conversationNotFound(id);
    return Response.json(conversationObject(this.existing(id)));
  }

  /** `DELETE /v1/conversations/{id}`: the conversation and its items (the responses stay). */
  remove(id: string): Response {
    if (!this.deps.conversations.delete(id)) throw conversationNotFound(id);
    return Response.json({ id, object: "conversation.deleted", deleted: true });
  }

  /** `POST /v1/conversations/{id}/items`: appended in order; answers the list of the items added. */
  addItems(id: string, body: AddItemsRequest, include: Includes): Response {
    this.existing(id);
    const added = this.deps.conversations.append(id, withIds(body.items), this.deps.now());
    return Response.json(list(shown(added, include), false));
  }

  /** `GET /v1/conversations/{id}/items`: a page (`after`, `limit`, `order`). */
  listItems(id: string, query: ListItemsQuery, include: Includes): Response {
    this.existing(id);
    const page = this.deps.conversations.page(id, query.after ?? null, query.limit, query.order);
    if (!page) throw invalidRequest(`No item with id '${query.after}' in this conversation.`, "after");
    return Response.json(list(shown(page.items, include), page.hasMore));
  }

  /** `GET /v1/conversations/{id}/items/{item_id}`. */
  retrieveItem(id: string, itemId: string, include: Includes): Response {
    this.existing(id);
    const item = this.deps.conversations.item(id, itemId);
    if (!item) throw itemNotFound(itemId);
    return Response.json(shown([item], include)[0]);
  }

  /** `DELETE /v1/conversations/{id}/items/{item_id}`: answers the conversation, as OpenAI does. */
  removeItem(id: string, itemId: string): Response {
    const record = this.existing(id);
    if (this.deps.conversations.removeItems(id, itemId) === 0) throw itemNotFound(itemId);
    return Response.json(conversationObject(record));
  }

  private existing(id: string) {
    const record = this.deps.conversations.get(id);
    if (!record) throw conversationNotFound(id);
    return record;
  }
}

/** Items as a conversation keeps them, each with its id (a minted one when it came without). */
function withIds(items: readonly Parameters<typeof conversationItem>[0][]): StoredItem[] {
  return items.map((item) => conversationItem(item, item.id ?? newItemId(item.type)));
}

/** Items as listed: OpenAI's conversation item shape (conversation-requests.ts), then `listedItems`. */
function shown(items: readonly StoredItem[], include: Includes): StoredItem[] {
  return listedItems(
    items.map((item) => conversationItem(item, item.id)),
    [...include],
  );
}

function list(data: readonly StoredItem[], hasMore: boolean) {
  return {
    object: "list",
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: hasMore,
  };
}

function itemNotFound(itemId: string): ApiError {
  return new ApiError(404, {
    type: "invalid_request_error",
    code: null,
    message: `Item with id '${itemId}' not found.`,
    param: null,
  });
}
