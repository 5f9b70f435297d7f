/**
 * Turns of a conversation (`conversation` on create, docs/conversations.md): the conversation's
 * items are the turn's context, and two turns of one conversation run one after the other.
 * Owns:
 * - the parameter: a conversation id or `{id}`; with `previous_response_id` it is a 400
 *   (OpenAI: "Mutually exclusive parameters"); an unknown id (or another tenant's: it names
 *   another Durable Object) is a 404;
 * - the expansion: the turn's input becomes the conversation's items followed by its own input, a
 *   full resend — so the engine's transparent deltas (src/resend/) continue the chain the
 *   conversation's last turn left, and the upstream gets only the new items on its warm socket;
 *   the append after the turn is the store's (conversation-store.ts `finish`, in the commit);
 * - the order: turns of one conversation are serialized in arrival order (each waits for the one
 *   before it to end, committed), so each sees the items of every turn before it.
 * Source: https://platform.openai.com/docs/api-reference/responses/create#responses_create-conversation
 */
import { type CreateRequest, normalizeInput } from "../protocol/create-request.ts";
import { conversationNotFound, invalidRequest } from "../protocol/errors.ts";
import type { StoredItem } from "../protocol/items.ts";
import { isRecord } from "../protocol/json.ts";
import type { Conversations } from "../store/conversations.ts";

/**
 * The conversation id a create names, or null.
 * @throws {ApiError} 400 for a malformed value, or one combined with `previous_response_id`.
 */
export function conversationOf(request: {
  conversation?: unknown;
  previous_response_id?: string | null | undefined;
}): string | null {
  const value = request.conversation;
  if (value === undefined || value === null) return null;
  const id = typeof value === "string" ? value : isRecord(value) ? value.id : undefined;
  if (typeof id !== "string" || id.length === 0) {
    throw invalidRequest(
      "Invalid 'conversation': expected a conversation id or an object with an 'id'.",
      "conversation",
      "invalid_value",
    );
  }
  if (request.previous_response_id) {
    throw invalidRequest(
      "Mutually exclusive parameters: Ensure you are only providing one of: 'previous_response_id' or 'conversation'.",
      "conversation",
      "mutually_exclusive_parameters",
    );
  }
  return id;
}

/** Serializes the turns of each conversation and expands their input. */
export class ConversationTurns {
  private readonly conversations: Conversations;
  /** The end of the last turn queued per conversation. */
  private readonly tails = new Map<string, Promise<unknown>>();

  constructor(conversations: Conversations) {
    this.conversations = conversations;
  }

  /**
   * The items of conversation `id`, oldest first (`input_tokens` counts them as its context).
   * @throws {ApiError} 404 when it is unknown.
   */
  items(id: string): StoredItem[] {
    if (!this.conversations.get(id)) throw conversationNotFound(id, "conversation");
    return this.conversations.items(id);
  }

  /**
   * Runs `turn` once every earlier turn of `id` ended, with `request`'s input preceded by the
   * conversation's items (read when it starts).
   * @throws {ApiError} 404 when the conversation is unknown (then, not at arrival).
   */
  run<T>(id: string, request: CreateRequest, turn: (expanded: CreateRequest) => Promise<T>): Promise<T> {
    const before = this.tails.get(id) ?? Promise.resolve();
    const result = before.then(() => {
      if (!this.conversations.get(id)) throw conversationNotFound(id, "conversation");
      const input = [...this.conversations.items(id), ...normalizeInput(request.input)];
      return turn({ ...request, input, conversation: undefined });
    });
    const tail = result.catch(() => undefined);
    this.tails.set(id, tail);
    void tail.then(() => {
      if (this.tails.get(id) === tail) this.tails.delete(id);
    });
    return result;
  }
}
