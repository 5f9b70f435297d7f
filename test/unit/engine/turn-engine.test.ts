/**
 * Where the durable commit sits in a turn (src/engine/turn-engine.ts, turn-emitter.ts), seen as
 * the order of the store's writes and the events a client is sent. A Durable Object's output gate
 * holds every message sent after a write until the write is durable
 * (https://developers.cloudflare.com/durable-objects/api/state/), so what is sent before a write
 * does not wait for it:
 * - store:true: the response is stored before `response.created`, and its output and status are
 *   committed before its terminal event (commit-before-complete);
 * - store:false (connection-scoped): `response.created` / `response.in_progress` go out before
 *   the insert, and the terminal event before the final write.
 */
import { describe, expect, it } from "vitest";
import { EMPTY_CONTEXT } from "../../../src/context/counted-context.ts";
import { LiveRegistry } from "../../../src/engine/live-responses.ts";
import { TurnEngine } from "../../../src/engine/turn-engine.ts";
import { createRequest } from "../../../src/protocol/create-request.ts";
import type { ConversationStore } from "../../../src/store/conversation-store.ts";
import type { Upstream, UpstreamEvent } from "../../../src/upstream/upstream.ts";

const OWNER = "ab".repeat(32);

/** A scripted upstream: one message, then `response.completed`. */
function upstream(): Upstream {
  const item = { type: "message", id: "msg_up", role: "assistant", status: "completed", content: [] };
  const rest: UpstreamEvent[] = [
    { type: "response.output_item.done", output_index: 0, item },
    {
      type: "response.completed",
      response: { id: "resp_up", status: "completed", output: [item], usage: { input_tokens: 1 } },
    },
  ];
  return {
    open: async () => ({
      first: {
        type: "response.output_item.added",
        output_index: 0,
        item: { ...item, status: "in_progress" },
      },
      rest: {
        async *[Symbol.asyncIterator]() {
          yield* rest;
        },
      },
    }),
  };
}

/** Runs one turn and returns the interleaving of store writes and sent events. */
async function trace(raw: Record<string, unknown>): Promise<string[]> {
  const order: string[] = [];
  const store = {
    create: () => void order.push("write: create"),
    finish: () => void order.push("write: finish"),
    appendEventLog: () => void order.push("write: log"),
    get: () => null,
    resendCandidates: () => [], // no held chain: a warm-up goes upstream (src/resend/match.ts)
    eventLogs: { delete: () => {} },
  } as unknown as ConversationStore;
  const engine = new TurnEngine({
    store,
    history: () => EMPTY_CONTEXT,
    upstreamFor: async () => upstream(),
    ownerId: OWNER,
    now: () => 1_000,
    keepaliveMs: 0,
    live: new LiveRegistry(),
    importRemote: async () => false,
    mayContinue: () => false,
    logFailure: () => {},
  });
  const request = createRequest.parse({ model: "m", input: "hi", ...raw });
  const sink = { send: (event: { type: string }) => void order.push(`send: ${event.type}`) };
  await engine.run(request, { connId: "socket_1", tenant: "t" }, sink, new AbortController().signal);
  return order;
}

describe("TurnEngine commit order", () => {
  it("store:true stores the response before announcing it and commits before completing", async () => {
    expect(await trace({ store: true })).toEqual([
      "write: create",
      "send: response.created",
      "send: response.in_progress",
      "write: log", // the event log exists from the start
      "send: response.output_item.added",
      "send: response.output_item.done",
      "write: finish",
      "send: response.completed",
    ]);
  });

  it("store:false sends each event before the write that follows it, the terminal event too", async () => {
    expect(await trace({ store: false })).toEqual([
      "send: response.created",
      "send: response.in_progress",
      "write: create",
      "send: response.output_item.added",
      "send: response.output_item.done",
      "send: response.completed",
      "write: finish",
    ]);
  });

  it("a store:false warm-up (generate: false) is sent before it is written", async () => {
    expect(await trace({ store: false, generate: false })).toEqual([
      "send: response.created",
      "send: response.in_progress",
      "write: create",
      "send: response.completed",
      "write: finish",
    ]);
  });
});
