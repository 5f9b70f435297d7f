/**
 * What the conversations tests (test/workers/conversations*.test.ts) read: the simulator's record
 * of their upstream requests, found by a marker in their input, and a conversation's items through
 * the `openai` SDK's auto-pagination.
 */
import type OpenAI from "openai";
import { inject } from "vitest";
import { simulatorRequests } from "./ws-client.ts";

/** A conversation item, as JSON. */
export type Item = Record<string, unknown>;

/** What the simulator's recorder keeps of one upstream request (`/_sim/requests`). */
export interface Recorded {
  transport: string;
  inputItemCount: number | null;
  contextItemCount: number | null;
}

/** The upstream requests whose body contains `marker`, in arrival order. */
export const recorded = async (marker: string): Promise<Recorded[]> =>
  (await simulatorRequests(inject("simulatorUrl"), marker)) as unknown as Recorded[];

/** A user message input item. */
export const user = (text: string) => ({ type: "message" as const, role: "user" as const, content: text });

/** Every item of a conversation, oldest first, through the SDK's auto-pagination in pages of `limit`. */
export async function allItems(client: OpenAI, id: string, limit = 100): Promise<Item[]> {
  const items: Item[] = [];
  for await (const item of client.conversations.items.list(id, { limit, order: "asc" })) {
    items.push(item as unknown as Item);
  }
  return items;
}
