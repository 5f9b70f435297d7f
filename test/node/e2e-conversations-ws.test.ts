/**
 * Conversations end to end with the real `openai` SDK against the local stack `npm start` runs
 * (`wrangler dev` + the reference simulator as a Responses WebSocket upstream; docs/conversations.md):
 * a conversation created over HTTP (`client.conversations.create`), continued with `response.create`
 * frames naming it over `ResponsesWS` — on a socket of its session, then on one of another session
 * (relayed to the conversation's) — then listed with `client.conversations.items.list` in pages of
 * two — each turn's input and output, in order — while the simulator's recorder shows the later
 * turns went upstream as deltas (only their new item).
 */
import OpenAI from "openai";
import type { ResponsesServerEvent } from "openai/resources/responses/responses";
import { ResponsesWS } from "openai/resources/responses/ws";
import { describe, expect, it } from "vitest";
import { LOCAL_DEV_KEY } from "../../scripts/local-stack.ts";
import { useSharedStack } from "../support/e2e-stack.ts";
import { simRequests } from "../support/sim-recorder.ts";
import { testId } from "../support/test-id.ts";

const e2e = useSharedStack();
const MODEL = "deltagate-sim";

/** What the simulator's recorder keeps of one upstream request (`/_sim/requests`). */
interface Recorded {
  transport: string;
  inputItemCount: number | null;
  contextItemCount: number | null;
}

function client(headers: Record<string, string> = {}): OpenAI {
  return new OpenAI({
    apiKey: LOCAL_DEV_KEY,
    baseURL: e2e.stack.baseUrl,
    maxRetries: 0,
    defaultHeaders: headers,
  });
}

/** Sends one create on `ws`; resolves with its events up to the terminal one; rejects on `error`. */
function turn(ws: ResponsesWS, create: Parameters<ResponsesWS["send"]>[0]): Promise<ResponsesServerEvent[]> {
  return new Promise((resolve, reject) => {
    const events: ResponsesServerEvent[] = [];
    const onEvent = (event: ResponsesServerEvent) => {
      events.push(event);
      if (event.type === "error") {
        ws.off("event", onEvent);
        reject(new Error(JSON.stringify(event)));
      }
      if (event.type === "response.completed" || event.type === "response.failed") {
        ws.off("event", onEvent);
        resolve(events);
      }
    };
    ws.on("event", onEvent);
    ws.send(create);
  });
}

/** The upstream requests whose body contains `marker`, in arrival order. */
async function recorded(marker: string): Promise<Recorded[]> {
  return simRequests(e2e.stack.simulatorUrl, marker);
}

/** Every item of a conversation, oldest first, fetched page by page (`limit` items a page). */
async function pages(sdk: OpenAI, id: string, limit: number) {
  const seen: Array<{ id: string; type: string; role?: string; text?: string }> = [];
  let pageCount = 0;
  let page = await sdk.conversations.items.list(id, { limit, order: "asc" });
  for (;;) {
    pageCount++;
    expect(page.data.length).toBeLessThanOrEqual(limit);
    for (const item of page.data) {
      const content = (item as { content?: Array<{ text?: string }> }).content;
      seen.push({
        id: item.id as string,
        type: item.type,
        ...("role" in item ? { role: item.role } : {}),
        ...(content?.[0]?.text !== undefined ? { text: content[0].text } : {}),
      });
    }
    if (!page.hasNextPage()) break;
    page = await page.getNextPage();
  }
  return { items: seen, pageCount };
}

describe("a conversation over ResponsesWS, with the openai SDK against wrangler dev", () => {
  it("created over HTTP, continued by response.create frames, listed in pages; later turns go upstream as deltas", async () => {
    const marker = `conv-e2e-${testId()}`;
    const session = `conv-e2e-${testId()}`;
    const sdk = client({ "session-id": session });
    const conversation = await sdk.conversations.create({
      items: [{ type: "message", role: "user", content: `${marker} context` }],
      metadata: { topic: "e2e" },
    });
    expect(conversation.id).toMatch(/^conv_/);

    // Two turns on a socket of the session that holds the conversation, the third on a socket of
    // another session, relayed to the conversation's (docs/conversations.md "WebSocket").
    const home = new ResponsesWS(sdk, { headers: { "session-id": session } });
    const away = new ResponsesWS(client());
    const responses: Array<{ id: string; output: Array<{ id: string; type: string }> }> = [];
    try {
      for (const [word, ws] of [
        ["one", home],
        ["two", home],
        ["three", away],
      ] as const) {
        const events = await turn(ws, {
          type: "response.create",
          model: MODEL,
          input: `${marker} ${word} [sim:tokens=4]`,
          conversation: conversation.id,
        });
        const done = events.at(-1);
        if (done?.type !== "response.completed") throw new Error(`turn ${word}: ${JSON.stringify(done)}`);
        expect(done.response.conversation).toEqual({ id: conversation.id });
        expect(done.response.previous_response_id).toBeNull();
        // One response's events, numbered from 0 without a gap.
        const numbers = events.map((e) => ("sequence_number" in e ? e.sequence_number : -1));
        expect(numbers).toEqual(numbers.map((_, i) => i));
        responses.push(done.response as unknown as (typeof responses)[number]);
      }
    } finally {
      home.close();
      away.close();
    }

    // Pages of two, oldest first: the context, then each turn's input and its output, in order.
    const { items, pageCount } = await pages(sdk, conversation.id, 2);
    const expected = [
      { text: `${marker} context`, role: "user" },
      ...responses.flatMap((response, i) => [
        { text: `${marker} ${["one", "two", "three"][i]} [sim:tokens=4]`, role: "user" },
        ...response.output.map((item) => ({ id: item.id, type: item.type })),
      ]),
    ];
    expect(items).toHaveLength(expected.length);
    expect(pageCount).toBe(Math.ceil(expected.length / 2));
    for (const [i, want] of expected.entries()) expect(items[i]).toMatchObject(want);
    expect(new Set(items.map((i) => i.id)).size).toBe(items.length);

    // Upstream: the first turn sends the conversation (its context and input); the next ones only
    // their new item, on the session's warm upstream WebSocket, over the whole context before it.
    const upstream = await recorded(marker);
    expect(upstream.map((r) => r.transport)).toEqual(["ws", "ws", "ws"]);
    expect(upstream.map((r) => r.inputItemCount)).toEqual([2, 1, 1]);
    const lastOutput = responses[2]?.output.length ?? 0;
    expect(upstream[2]?.contextItemCount).toBe(items.length - lastOutput);
  });
});
