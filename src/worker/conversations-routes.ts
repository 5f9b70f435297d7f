/**
 * Worker routes of the Conversations API (docs/conversations.md): each body and query parsed and
 * validated once (src/protocol/conversation-requests.ts), then handed to the session Durable
 * Object that holds the conversation. A conversation id names that object (`conv_<owner><random>`,
 * src/util/ids.ts), so every route reaches it with no lookup table; an id that is not Deltagate's,
 * not of this namespace, or — for a client secret — not of its session, is not found here, and
 * another tenant's is not found by the object's tenant check. `POST /v1/conversations` creates the
 * conversation in the session the request names (the session header, a client secret's own), else
 * in a fresh one; a WebSocket opened on that session may continue it too.
 * Source: https://platform.openai.com/docs/api-reference/conversations
 */
import type { Context } from "hono";
import {
  addItemsRequest,
  createConversationRequest,
  listItemsQuery,
  updateConversationRequest,
} from "../protocol/conversation-requests.ts";
import { conversationNotFound } from "../protocol/errors.ts";
import type { ConversationCall } from "../session/conversations-http.ts";
import { conversationOwner } from "../util/ids.ts";
import type { AppEnv } from "./app-env.ts";
import { ownerStubOf, query, sessionFor, sessionObjectName, unaryBody } from "./responses-routes.ts";

/** `POST /v1/conversations`. */
export async function createConversation(c: Context<AppEnv>): Promise<Response> {
  const { body } = await unaryBody(c.req.raw, createConversationRequest);
  const tenant = c.get("tenant");
  const stub = c.env.SESSIONS.getByName(sessionObjectName(tenant, sessionFor(c)));
  return stub.createConversation(tenant, body);
}

/** Every route on `/v1/conversations/{id}…`: `call` built from the validated request. */
async function onConversation(
  c: Context<AppEnv>,
  call: (c: Context<AppEnv>) => Promise<ConversationCall> | ConversationCall,
): Promise<Response> {
  const id = c.req.param("id") ?? "";
  const stub = ownerStubOf(c, conversationOwner(id));
  if (!stub) throw conversationNotFound(id);
  return stub.conversationCall(c.get("tenant"), id, await call(c));
}

/** `include` of an item route (`include[]=…`, as the `openai` SDK sends it, or `include=…`). */
function includes(c: Context<AppEnv>): string[] {
  const given = [...(c.req.queries("include[]") ?? []), ...(c.req.queries("include") ?? [])];
  return given.filter((value) => value.length > 0);
}

function itemId(c: Context<AppEnv>): string {
  return c.req.param("item_id") ?? "";
}

export const retrieveConversation = (c: Context<AppEnv>) => onConversation(c, () => ({ route: "retrieve" }));

export const updateConversation = (c: Context<AppEnv>) =>
  onConversation(c, async () => ({
    route: "update",
    body: (await unaryBody(c.req.raw, updateConversationRequest)).body,
  }));

export const deleteConversation = (c: Context<AppEnv>) => onConversation(c, () => ({ route: "delete" }));

export const addConversationItems = (c: Context<AppEnv>) =>
  onConversation(c, async () => ({
    route: "add_items",
    body: (await unaryBody(c.req.raw, addItemsRequest)).body,
    include: includes(c),
  }));

export const listConversationItems = (c: Context<AppEnv>) =>
  onConversation(c, () => ({ route: "list_items", query: query(c, listItemsQuery), include: includes(c) }));

export const retrieveConversationItem = (c: Context<AppEnv>) =>
  onConversation(c, () => ({ route: "retrieve_item", itemId: itemId(c), include: includes(c) }));

export const deleteConversationItem = (c: Context<AppEnv>) =>
  onConversation(c, () => ({ route: "delete_item", itemId: itemId(c) }));
