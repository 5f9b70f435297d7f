/**
 * Background mode as OpenAI documents it (issue #25 item 1; docs/background.md), through the real
 * `openai` SDK where it has the call: `background: true` answers at once with `status: "queued"`
 * and the turn runs on in its session Durable Object with no client attached — never cancelled for
 * want of one, and an eviction waits for it; it is polled with `GET`, streamed from any
 * `starting_after` while it runs and after, created with `stream: true` and resumed, cancelled
 * (twice: the same final object); a restart mid-turn ends it `failed` with the output its log
 * holds; `store: false` is refused.
 * The simulator's `hold=NAME` directive keeps a response running (every event but the terminal
 * one sent) until the test releases it, so "while it runs" is a state, not a race.
 */
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { sdkClient } from "../support/sdk-client.ts";
import { sessionStub } from "../support/session-stub.ts";
import { SseReader } from "../support/sse-reader.ts";
import { testId } from "../support/test-id.ts";
import { KEY_A, uniqueSession, workerFetch } from "../support/ws-client.ts";

const MODEL = "deltagate-sim";
const auth = { authorization: `Bearer ${KEY_A}` };

type Event = { type: string; sequence_number: number; delta?: string; response?: { status: string } };

/** A held turn's input: it streams `tokens` tokens, then waits for `release(hold)`. */
function heldInput(hold: string, tokens = 30): string {
  return `${hold} [sim:hold=${hold}] [sim:tools=0] [sim:tokens=${tokens}]`;
}

/** Lets the simulator finish the response it holds under `hold`. */
async function release(hold: string): Promise<void> {
  await fetch(`${inject("simulatorUrl")}/_sim/release?hold=${encodeURIComponent(hold)}`, { method: "POST" });
}

function post(body: unknown, session: string): Promise<Response> {
  return workerFetch("/v1/responses", {
    method: "POST",
    headers: { ...auth, "content-type": "application/json", "session-id": session },
    body: JSON.stringify(body),
  });
}

/** `GET /v1/responses/{id}?stream=true&starting_after=N` as a reader. */
async function streamFrom(id: string, startingAfter: number): Promise<SseReader> {
  const res = await workerFetch(`/v1/responses/${id}?stream=true&starting_after=${startingAfter}`, {
    headers: auth,
  });
  expect(res.status).toBe(200);
  return new SseReader(res.body!);
}

const text = (events: Event[]) =>
  events
    .filter((e) => e.type === "response.output_text.delta")
    .map((e) => e.delta)
    .join("");

/** The session Durable Object's live responses (private fields): their grace, their listeners. */
type WithLive = {
  parts: { live: { graceMs: number; get(id: string): { subscribers: Set<unknown> } | undefined } };
};

describe("background mode", () => {
  it("refuses store:false with 400 param store, before any session is reached", async () => {
    const res = await post(
      { model: MODEL, input: "hi", background: true, store: false },
      uniqueSession("bg-nostore"),
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { param: string } }).error.param).toBe("store");
  });

  it("answers queued at once; the turn runs with no client, an eviction waits for it, and GET polls it", async () => {
    const session = uniqueSession("bg-poll");
    const hold = `bg-poll-${testId()}`;
    const client = sdkClient(KEY_A, { "session-id": session });
    const created = await client.responses.create({ model: MODEL, input: heldInput(hold), background: true });
    expect(created).toMatchObject({ status: "queued", background: true, store: true, output: [] });
    // No client is attached to it now; it runs (the simulator holds it before its end).
    expect((await client.responses.retrieve(created.id)).status).toBe("in_progress");
    // An eviction of its Durable Object waits for the turn's pending work (Cloudflare keeps an
    // object with pending I/O in memory): the turn finishes, then the object goes.
    const evicted = evictDurableObject(sessionStub("tenant-a", session));
    await release(hold);
    await evicted;
    const done = await client.responses.retrieve(created.id);
    expect(done).toMatchObject({ id: created.id, status: "completed", background: true });
    expect(done.output_text.length).toBeGreaterThan(0);
  });

  it("streams from starting_after while it runs and after, with the queued lifecycle first", async () => {
    const session = uniqueSession("bg-stream");
    const hold = `bg-stream-${testId()}`;
    const created = (await (
      await post({ model: MODEL, input: heldInput(hold), background: true }, session)
    ).json()) as { id: string };
    // Everything so far, while it runs: then a second stream from the middle.
    const first = await streamFrom(created.id, -1);
    await first.until((e) => e.type === "response.output_text.delta");
    await first.until((e) => e.type === "response.output_text.delta");
    await first.cancel();
    const seen = first.events.map((e) => e.data as unknown as Event);
    expect(seen.slice(0, 3).map((e) => [e.type, e.response?.status])).toEqual([
      ["response.created", "queued"],
      ["response.queued", "queued"],
      ["response.in_progress", "in_progress"],
    ]);
    const cursor = seen.at(-1)!.sequence_number;
    const second = await streamFrom(created.id, cursor);
    await second.next();
    await release(hold);
    const rest = (await second.rest()).map((e) => e.data as unknown as Event);
    const all = [...seen, ...rest];
    expect(all.map((e) => e.sequence_number)).toEqual(all.map((_, i) => i));
    expect(all.at(-1)?.type).toBe("response.completed");
    // After it ended: the same events from its log.
    const replay = (await (await streamFrom(created.id, 2)).rest()).map((e) => e.data as unknown as Event);
    expect(replay).toEqual(all.slice(3));
    expect(text(replay)).toBe(text(all));
  });

  it("stream:true with background:true streams, survives its client, and resumes through the SDK", async () => {
    const session = uniqueSession("bg-sse");
    const hold = `bg-sse-${testId()}`;
    const stub = sessionStub("tenant-a", session);
    // The abandonment grace of this Durable Object made 1 ms: a foreground response whose client
    // goes is cancelled at once, a background one never.
    await runInDurableObject(stub, (instance) => {
      (instance as unknown as WithLive).parts.live.graceMs = 1;
    });
    const foregroundHold = `bg-fg-${testId()}`;
    const foreground = new SseReader(
      (await post({ model: MODEL, input: heldInput(foregroundHold), stream: true }, session)).body!,
    );
    const reader = new SseReader(
      (await post({ model: MODEL, input: heldInput(hold), background: true, stream: true }, session)).body!,
    );
    const id = ((await reader.next())!.data.response as { id: string }).id;
    await reader.until((e) => e.type === "response.output_text.delta");
    const cursor = reader.events.at(-1)!.data.sequence_number;
    const foregroundId = ((await foreground.next())!.data.response as { id: string }).id;
    await reader.cancel(); // both clients go away
    await foreground.cancel();
    // The session hears of a gone SSE client when its stream next fails to write (a keepalive).
    const listeners = () =>
      runInDurableObject(
        stub,
        (instance) => (instance as unknown as WithLive).parts.live.get(id)?.subscribers.size,
      );
    await expect.poll(listeners, { timeout: 15_000 }).toBe(0);
    const client = sdkClient(KEY_A);
    await expect
      .poll(async () => (await client.responses.retrieve(foregroundId)).status, { timeout: 15_000 })
      .toBe("cancelled");
    expect((await client.responses.retrieve(id)).status).toBe("in_progress");
    // The SDK resumes the stream after the last event its client had.
    const resumed = await client.responses.retrieve(id, { stream: true, starting_after: cursor });
    await release(hold);
    const rest: Event[] = [];
    for await (const event of resumed) rest.push(event as unknown as Event);
    expect(rest[0]?.sequence_number).toBe(cursor + 1);
    expect(rest.at(-1)).toMatchObject({ type: "response.completed", response: { status: "completed" } });
    await release(foregroundHold);
  });

  it("cancels a background response; cancelling again answers the same final object", async () => {
    const session = uniqueSession("bg-cancel");
    const hold = `bg-cancel-${testId()}`;
    const client = sdkClient(KEY_A, { "session-id": session });
    const created = await client.responses.create({ model: MODEL, input: heldInput(hold), background: true });
    const cancelled = await client.responses.cancel(created.id);
    expect(cancelled).toMatchObject({ id: created.id, status: "cancelled", background: true });
    expect(await client.responses.cancel(created.id)).toEqual(cancelled);
    expect((await client.responses.retrieve(created.id)).status).toBe("cancelled");
    await release(hold);
    // A completed one is not cancellable.
    const done = await client.responses.create({ model: MODEL, input: "short", background: true });
    await expect.poll(async () => (await client.responses.retrieve(done.id)).status).toBe("completed");
    const refused = await workerFetch(`/v1/responses/${done.id}/cancel`, { method: "POST", headers: auth });
    expect(refused.status).toBe(400);
  });

  it("ends a background response a restart interrupted as failed, with the output its log holds", async () => {
    const session = uniqueSession("bg-restart");
    const hold = `bg-restart-${testId()}`;
    const created = (await (
      await post({ model: MODEL, input: heldInput(hold, 60), background: true }, session)
    ).json()) as { id: string };
    const logged = () =>
      runInDurableObject(sessionStub("tenant-a", session), (_instance, state) =>
        state.storage.sql
          .exec<{ data: string }>(
            "SELECT data FROM event_logs WHERE response_id = ? ORDER BY chunk",
            created.id,
          )
          .toArray()
          .flatMap((row) => JSON.parse(row.data) as Event[]),
      );
    // Every event but the terminal one was sent and logged (the simulator holds the end).
    await expect.poll(async () => text(await logged()).length).toBeGreaterThan(0);
    await expect
      .poll(async () => (await logged()).some((e) => e.type === "response.output_text.done"))
      .toBe(true);
    await runInDurableObject(sessionStub("tenant-a", session), (_instance, state) => {
      state.abort("simulated restart");
    }).catch(() => {});
    const after = await sdkClient(KEY_A).responses.retrieve(created.id);
    expect(after).toMatchObject({ status: "failed", background: true, error: { code: "server_error" } });
    expect(after.output_text).toBe(text(await logged()));
    await release(hold);
  });
});
