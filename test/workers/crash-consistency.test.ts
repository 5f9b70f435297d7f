/**
 * Crash-consistent streaming (issue #10 item 3): a store:true response's event log is persisted
 * while it streams (in batches, after the events were sent), so when the session Durable Object
 * is reset mid-response (`ctx.abort()`: what a crash, an eviction or a deploy does to the
 * instance), the response is not lost: the next instance ends it as `failed` with the output that
 * was logged, its stream resumes over HTTP and WebSocket with the logged events and then a
 * terminal event (never 409), and the chain continues from it. store:false responses keep no log.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { LOG_BATCH_EVENTS } from "../../src/engine/turn-emitter.ts";
import { sessionStub } from "../support/session-stub.ts";
import { SseReader } from "../support/sse-reader.ts";
import { testId } from "../support/test-id.ts";
import { connect, type Frame, KEY_A, uniqueSession, workerFetch } from "../support/ws-client.ts";
import { recorded } from "./upstream-ws-loop.ts";

const MODEL = "deltagate-sim";
const auth = { authorization: `Bearer ${KEY_A}` };

type Logged = { type: string; sequence_number: number; delta?: string; response?: ResponseJson };
type ResponseJson = {
  id: string;
  status: string;
  error: { code: string; message: string } | null;
  output: Array<{ type: string; status?: string; content?: Array<{ text?: string }> }>;
};

function post(body: unknown, session: string): Promise<Response> {
  return workerFetch("/v1/responses", {
    method: "POST",
    headers: { ...auth, "content-type": "application/json", "session-id": session },
    body: JSON.stringify(body),
  });
}

/** The events persisted for `id` so far, read inside the session's Durable Object. */
function persistedLog(session: string, id: string): Promise<Logged[]> {
  return runInDurableObject(sessionStub("tenant-a", session), (_instance, state) =>
    state.storage.sql
      .exec<{ data: string }>("SELECT data FROM event_logs WHERE response_id = ? ORDER BY chunk", id)
      .toArray()
      .flatMap((row) => JSON.parse(row.data) as Logged[]),
  );
}

/** Resets the session's Durable Object as a crash would (in-memory state gone, storage kept). */
async function crash(session: string): Promise<void> {
  await runInDurableObject(sessionStub("tenant-a", session), (_instance, state) => {
    state.abort("simulated crash");
  }).catch(() => {});
}

const text = (events: Logged[]) =>
  events
    .filter((e) => e.type === "response.output_text.delta")
    .map((e) => e.delta)
    .join("");

describe("crash-consistent streaming", () => {
  it("persists the event log while the response streams, not only at its end", async () => {
    const session = uniqueSession("log-streaming");
    const reader = new SseReader(
      (await post({ model: MODEL, input: "long [sim:tokens=4000]", stream: true }, session)).body!,
    );
    const id = ((await reader.next())!.data.response as { id: string }).id;
    for (let n = 0; n < 300; n++) await reader.next();
    // What was sent is logged, in batches that trail the stream: well over half of it already.
    await expect.poll(async () => (await persistedLog(session, id)).length).toBeGreaterThan(150);
    const log = await persistedLog(session, id);
    expect(log.map((e) => e.sequence_number)).toEqual(log.map((_, i) => i));
    await reader.cancel();
  });

  it("ends a response interrupted by a restart as failed with what was logged, resumable over HTTP", async () => {
    const marker = `restart-http-${testId()}`;
    const session = uniqueSession("restart-http");
    const reader = new SseReader(
      (await post({ model: MODEL, input: `${marker} [sim:tokens=4000]`, stream: true }, session)).body!,
    );
    const id = ((await reader.next())!.data.response as { id: string }).id;
    for (let n = 0; n < 200; n++) await reader.next();
    await expect.poll(async () => (await persistedLog(session, id)).length).toBeGreaterThan(100);
    await crash(session);
    await reader.cancel();

    const retrieved = (await (
      await workerFetch(`/v1/responses/${id}`, { headers: auth })
    ).json()) as ResponseJson;
    expect(retrieved.status).toBe("failed");
    expect(retrieved.error?.code).toBe("server_error");
    const log = await persistedLog(session, id);
    const logged = log.slice(0, -1);
    expect(retrieved.output[0]).toMatchObject({ type: "message", status: "incomplete" });
    expect(retrieved.output[0]?.content?.[0]?.text).toBe(text(logged));

    // Resume from an event that was logged: the rest of the log, then the terminal event.
    const resumed = await new SseReader(
      (await workerFetch(`/v1/responses/${id}?stream=true&starting_after=40`, { headers: auth })).body!,
    ).rest();
    const events = resumed.map((e) => e.data as unknown as Logged);
    expect(events.map((e) => e.sequence_number)).toEqual(
      logged
        .slice(41)
        .map((e) => e.sequence_number)
        .concat(logged.length + LOG_BATCH_EVENTS),
    );
    expect(events.at(-1)).toMatchObject({ type: "response.failed", response: { id, status: "failed" } });
    // A client that saw more than was logged still gets the terminal event.
    const ahead = await new SseReader(
      (await workerFetch(`/v1/responses/${id}?stream=true&starting_after=100000`, { headers: auth })).body!,
    ).rest();
    expect(ahead.map((e) => e.data.type)).toEqual(["response.failed"]);

    // The chain continues from what the client saw.
    const next = await post(
      { model: MODEL, previous_response_id: id, input: `${marker} go on [sim:tokens=5]` },
      session,
    );
    expect(((await next.json()) as ResponseJson).status).toBe("completed");
    const sent = (await recorded(inject("simulatorUrl"), marker)).at(-1);
    const assistant = sent?.body.input?.find((item) => item.role === "assistant") as
      | ResponseJson["output"][number]
      | undefined;
    expect(assistant?.content?.[0]?.text).toBe(text(logged));
  });

  it("resumes a response interrupted by a restart over WebSocket with its log and a terminal event", async () => {
    const session = uniqueSession("restart-ws");
    const ws = await connect({ session });
    ws.send({ type: "response.create", model: MODEL, input: "long [sim:tokens=4000]" });
    await ws.until((frames) => frames.length > 150);
    const id = (ws.frames[0] as unknown as { response: { id: string } }).response.id;
    await expect.poll(async () => (await persistedLog(session, id)).length).toBeGreaterThan(100);
    await crash(session);
    ws.close();

    const again = await connect({ session });
    again.send({ type: "deltagate.response.resume", response_id: id, starting_after: 10 });
    await again.until((frames) => frames.some((f: Frame) => f.type === "response.failed"));
    const log = await persistedLog(session, id);
    expect(again.frames.map((f) => f.sequence_number)).toEqual(log.slice(11).map((e) => e.sequence_number));
    expect(again.frames.at(-1)).toMatchObject({
      response: { status: "failed", error: { code: "server_error" } },
    });
    again.close();
  });

  it("ends a resume from the last event a client was sent, when the restart came before that event was logged", async () => {
    const session = uniqueSession("restart-unlogged");
    const ws = await connect({ session });
    ws.send({ type: "response.create", model: MODEL, input: "long [sim:tokens=4000]" });
    await ws.until((frames) => frames.length > 60);
    const id = (ws.frames[0] as unknown as { response: { id: string } }).response.id;
    const held = () => Math.max(...ws.frames.map((f) => (f.sequence_number as number | undefined) ?? -1));

    // The kill falls between a sent event and its log write: inside the Durable Object (nothing
    // of its own runs in between), it aborts only when the client holds an event the log lacks.
    let killedAt: { held: number; logged: number } | null = null;
    for (let attempt = 0; attempt < 100 && !killedAt; attempt++) {
      await runInDurableObject(sessionStub("tenant-a", session), (_instance, state) => {
        const row = state.storage.sql
          .exec<{ data: string }>(
            "SELECT data FROM event_logs WHERE response_id = ? ORDER BY chunk DESC LIMIT 1",
            id,
          )
          .toArray()[0];
        const logged = row ? ((JSON.parse(row.data) as Logged[]).at(-1)?.sequence_number ?? -1) : -1;
        if (held() <= logged) return;
        killedAt = { held: held(), logged };
        state.abort("simulated crash");
      }).catch(() => {});
      const count = ws.frames.length;
      if (!killedAt) await ws.until((frames) => frames.length > count);
    }
    expect(killedAt).not.toBeNull();
    const { held: last } = killedAt as unknown as { held: number; logged: number };
    const sent = new Set(ws.frames.map((f) => f.sequence_number));
    ws.close();

    // HTTP: resuming from the last number the client holds ends with a terminal event whose number
    // no event the client was sent had.
    const overHttp = await new SseReader(
      (await workerFetch(`/v1/responses/${id}?stream=true&starting_after=${last}`, { headers: auth })).body!,
    ).rest();
    expect(overHttp.map((e) => e.data.type)).toEqual(["response.failed"]);
    const terminal = overHttp[0]!.data;
    expect(terminal.sequence_number).toBeGreaterThan(last);
    expect(sent.has(terminal.sequence_number)).toBe(false);
    // Resuming from a logged event: the rest of the log, then that same terminal event.
    const fromStart = (
      await new SseReader(
        (
          await workerFetch(`/v1/responses/${id}?stream=true`, { headers: auth })
        ).body!,
      ).rest()
    ).map((e) => e.data);
    expect(fromStart.at(-1)).toEqual(terminal);
    const numbers = fromStart.map((e) => e.sequence_number);
    expect(new Set(numbers).size).toBe(numbers.length);

    // WebSocket: the same terminal event, on a new socket of the session.
    const again = await connect({ session });
    again.send({ type: "deltagate.response.resume", response_id: id, starting_after: last });
    await again.until((frames) => frames.some((f: Frame) => f.type === "response.failed"), 5_000);
    expect(again.frames).toEqual([terminal]);
    again.close();
  });

  it("keeps no event log for store:false responses", async () => {
    const session = uniqueSession("log-store-false");
    const ws = await connect({ session });
    ws.send({ type: "response.create", model: MODEL, store: false, input: "long [sim:tokens=2000]" });
    await ws.until((frames) => frames.length > 100);
    const id = (ws.frames[0] as unknown as { response: { id: string } }).response.id;
    expect(await persistedLog(session, id)).toEqual([]);
    await ws.turn(0);
    expect(await persistedLog(session, id)).toEqual([]);
    ws.close();
  });
});
