/**
 * End-to-end proof of the docs/sessions.md's "Reconnecting and resuming" recipe with the real `openai` SDK
 * against the local stack `npm start` runs (`wrangler dev` + the reference simulator, random
 * ports, own temp persistence). A recording proxy sits between the client and Deltagate and cuts
 * the live socket abruptly mid-stream (no close frame: 1006 for the client). The client is a
 * `ResponsesWS` with `reconnect` and a `session-id` header, used as a user would: on the SDK's
 * `reconnected` event it sends `deltagate.response.resume` with the response's id and the last
 * `sequence_number` it saw. The claim under test: a `store: true` response keeps generating while
 * its client is gone, and the resumed socket delivers exactly the remaining events (contiguous
 * sequence numbers, no duplicate), so the final text equals an uncut run of the same input.
 */
import OpenAI from "openai";
import { ResponseStream } from "openai/lib/responses/ResponseStream";
import type { ResponsesServerEvent } from "openai/resources/responses/responses";
import { ResponsesWS, type ResponsesWSReconnectOptions } from "openai/resources/responses/ws";
import { describe, expect, it } from "vitest";
import { LOCAL_DEV_KEY } from "../../scripts/local-stack.ts";
import { useSharedStack } from "../support/e2e-stack.ts";
import { testId } from "../support/test-id.ts";

/** The cut happens once the client has seen this `sequence_number` (an 800-token answer has ~200). */
const CUT_AFTER = 20;
/** Guard against a hang only (the run itself takes about a second): fail with diagnostics. */
const RUN_GUARD_MS = 60_000;

const e2e = useSharedStack();

/** An event as received, with the number of the socket (1 = before the cut) it arrived on. */
interface Received {
  socket: number;
  event: ResponsesServerEvent;
}

/** A client of Deltagate through the proxy, no HTTP retries (nothing here should need one). */
function client(): OpenAI {
  return new OpenAI({ apiKey: LOCAL_DEV_KEY, baseURL: `${e2e.proxy.url}/v1`, maxRetries: 0 });
}

/** `sequence_number` of an event (Deltagate's request-level `error` events have none). */
function sequenceOf(event: ResponsesServerEvent): number | undefined {
  return "sequence_number" in event ? event.sequence_number : undefined;
}

/** Resolves with `ws`'s events up to the first `response.completed`; rejects on any `error`. */
function untilCompleted(ws: ResponsesWS, received: Received[], socketNumber: () => number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const guard = setTimeout(() => {
      const got = JSON.stringify(received.map((r) => [r.socket, r.event.type, sequenceOf(r.event)]));
      const fail = (wrangler: string) =>
        reject(
          new Error(`no response.completed within ${RUN_GUARD_MS} ms; got ${got}\nwrangler:\n${wrangler}`),
        );
      e2e.stack.output().then(fail, () => fail("(its output could not be read)"));
    }, RUN_GUARD_MS);
    ws.on("event", (event) => {
      received.push({ socket: socketNumber(), event });
      if (event.type === "response.completed") {
        clearTimeout(guard);
        resolve();
      }
    });
    ws.on("error", (error) => {
      clearTimeout(guard);
      reject(error);
    });
    ws.on("close", (code, reason) => {
      clearTimeout(guard);
      reject(new Error(`the socket closed for good (${code} ${reason}) before response.completed`));
    });
  });
}

/** The concatenated `response.output_text.delta`s of a response's events. */
function deltaText(events: readonly ResponsesServerEvent[]): string {
  return events.map((e) => (e.type === "response.output_text.delta" ? e.delta : "")).join("");
}

/** The events, re-read by the SDK's own stream accumulator: its final Response's output text. */
async function sdkFinalText(events: readonly ResponsesServerEvent[]): Promise<string> {
  const body = events.map((e) => `${JSON.stringify(e)}\n`).join("");
  const stream = new Response(body).body;
  if (!stream) throw new Error("no body");
  const final = await ResponseStream.fromReadableStream(stream).finalResponse();
  return final.output_text;
}

/** One uncut `store: true` run of `input` on its own socket and session: its events. */
async function uncutRun(input: string): Promise<ResponsesServerEvent[]> {
  const ws = new ResponsesWS(client(), { headers: { "session-id": `reconnect-ref-${testId()}` } });
  const received: Received[] = [];
  const done = untilCompleted(ws, received, () => 1);
  ws.send({ type: "response.create", model: "deltagate-sim", store: true, input });
  try {
    await done;
  } finally {
    ws.close();
  }
  return received.map((r) => r.event);
}

describe("ResponsesWS reconnect + deltagate.response.resume against wrangler dev", () => {
  it("a socket cut mid-stream (1006) is reconnected by the SDK and resumed with exactly the missed events", async () => {
    // The simulator's text is seeded by the context: the same input gives the same answer.
    const input = `Tell a long story. [sim:tokens=800] [reconnect-e2e:${testId()}]`;
    const reference = await uncutRun(input);
    const referenceText = deltaText(reference);
    expect(referenceText.length).toBeGreaterThan(1_000);
    expect(reference.map(sequenceOf)).toEqual(reference.map((_, i) => i));

    // The recipe (docs/sessions.md "Reconnecting and resuming"), as a user writes it.
    const sessionId = `reconnect-e2e-${testId()}`;
    const reconnecting: Parameters<ResponsesWSReconnectOptions["onReconnecting"]>[0][] = [];
    const ws = new ResponsesWS(client(), {
      headers: { "session-id": sessionId },
      reconnect: { onReconnecting: (event) => void reconnecting.push(event), maxRetries: 5 },
    });
    let lastResponseId: string | null = null;
    let lastSequenceNumber = -1;
    ws.on("event", (event) => {
      if (event.type === "response.created") lastResponseId = event.response.id;
      if ("sequence_number" in event) lastSequenceNumber = event.sequence_number;
    });
    let resumedAfter: number | null = null;
    ws.on("reconnected", () => {
      if (!lastResponseId) return;
      resumedAfter = lastSequenceNumber;
      ws.send({
        type: "deltagate.response.resume",
        response_id: lastResponseId,
        starting_after: lastSequenceNumber,
      } as never); // a Deltagate extension: not among the SDK's client event types
    });

    // The test's part: record what arrived on which socket, and cut socket 1 mid-stream (the
    // proxy numbers connections; this client's are the upgrades carrying its session id).
    const ownUpgrades = () => e2e.proxy.upgrades.filter((u) => u.headers["session-id"] === sessionId);
    let socket = 1;
    ws.on("reconnected", () => {
      socket = 2;
    });
    let cut = false;
    ws.on("event", (event) => {
      const first = ownUpgrades()[0];
      if (!cut && first && (sequenceOf(event) ?? -1) >= CUT_AFTER) {
        cut = true;
        e2e.proxy.dropConnection(first.connection);
      }
    });
    const received: Received[] = [];
    const done = untilCompleted(ws, received, () => socket);
    ws.send({ type: "response.create", model: "deltagate-sim", store: true, input });
    try {
      await done;
    } finally {
      ws.close();
    }

    // The SDK saw an abnormal close (1006) once and reconnected on a second upgrade of the same
    // session, where the client's only frame was the resume from its last seen sequence_number.
    expect(reconnecting.map((r) => r.closeCode)).toEqual([1006]);
    const [first, second, ...more] = ownUpgrades();
    expect([first?.status, second?.status, more]).toEqual([101, 101, []]);
    const created = received[0]?.event;
    expect(created?.type).toBe("response.created");
    const responseId = created?.type === "response.created" ? created.response.id : "";
    expect(resumedAfter).not.toBeNull();
    const clientFrames = e2e.proxy.frames.filter((f) => f.from === "client");
    expect(clientFrames.filter((f) => f.connection === second?.connection).map((f) => f.data)).toEqual([
      { type: "deltagate.response.resume", response_id: responseId, starting_after: resumedAfter },
    ]);

    // The cut was mid-stream: text deltas arrived on both sockets.
    const before = received.filter((r) => r.socket === 1).map((r) => r.event);
    const after = received.filter((r) => r.socket === 2).map((r) => r.event);
    expect(sequenceOf(before.at(-1)!)).toBe(resumedAfter);
    expect(resumedAfter).toBeGreaterThanOrEqual(CUT_AFTER);
    expect(deltaText(before)).not.toBe("");
    expect(deltaText(after)).not.toBe("");

    // Exactly the remaining events: the resumed socket starts right after the last seen event,
    // and together they are 0…N with no gap and no duplicate, ending in response.completed.
    const events = received.map((r) => r.event);
    expect(sequenceOf(after[0]!)).toBe(resumedAfter! + 1);
    expect(events.map(sequenceOf)).toEqual(events.map((_, i) => i));
    expect(events.map((e) => e.type)).toEqual(reference.map((e) => e.type));
    const completed = events.at(-1);
    expect(completed?.type === "response.completed" && completed.response.id).toBe(responseId);

    // The text equals the uncut run's, by the deltas and by the SDK's own accumulator.
    expect(deltaText(events)).toBe(referenceText);
    expect(await sdkFinalText(events)).toBe(referenceText);
    expect(await sdkFinalText(reference)).toBe(referenceText);
  });
});
