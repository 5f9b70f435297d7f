/**
 * Continuity across connections and transports (issue #3 §2, §4): a chain alternating WebSocket
 * and HTTP turns with a Durable Object eviction in the middle, continuing a store:true response
 * from another session, tenant isolation on every route, and retention (expiry and DELETE).
 */
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import OpenAI from "openai";
import { describe, expect, inject, it } from "vitest";
import { responseOwner } from "../../src/util/ids.ts";
import { sdkClient } from "../support/sdk-client.ts";
import { testId } from "../support/test-id.ts";
import {
  connect,
  type Frame,
  KEY_B,
  simulatorRequests,
  uniqueSession,
  workerFetch,
} from "../support/ws-client.ts";

const MODEL = "deltagate-sim";
const idOf = (frames: Frame[]) => (frames.at(-1) as unknown as { response: { id: string } }).response.id;

describe("continuity", () => {
  it("runs a 10-turn chain alternating WebSocket and HTTP, with an eviction in the middle", async () => {
    const simulatorUrl = inject("simulatorUrl");
    const marker = `alt-${testId()}`;
    const session = uniqueSession("alternate");
    const client = sdkClient();
    let previous: string | null = null;
    let ws = await connect({ session });
    let wsTurns = 0;
    for (let turn = 0; turn < 10; turn++) {
      const input = turn === 0 ? `${marker} turn 0` : `turn ${turn}`;
      if (turn === 5) {
        ws.close();
        await evictDurableObject(env.SESSIONS.get(env.SESSIONS.idFromString(responseOwner(previous!)!)));
        ws = await connect({ session });
        wsTurns = 0;
      }
      if (turn % 2 === 0) {
        ws.send({
          type: "response.create",
          model: MODEL,
          input,
          ...(previous ? { previous_response_id: previous } : {}),
        });
        previous = idOf(await ws.turn(wsTurns++));
      } else {
        const response: OpenAI.Responses.Response = await client.responses.create({
          model: MODEL,
          input,
          previous_response_id: previous,
        });
        previous = response.id;
      }
    }
    ws.close();
    const recorded = await simulatorRequests(simulatorUrl, marker);
    // Every turn's upstream request carried the whole history: 2 items per earlier turn + its input.
    expect(recorded.map((r) => r.contextItemCount)).toEqual([1, 3, 5, 7, 9, 11, 13, 15, 17, 19]);
    const last = recorded.at(-1)!.body as { input: Array<{ content: unknown }> };
    expect(JSON.stringify(last.input)).toContain(`${marker} turn 0`);
  });

  it("continues a store:true response from another session of the same tenant", async () => {
    const first = await connect({ session: uniqueSession("origin") });
    first.send({ type: "response.create", model: MODEL, input: "origin turn" });
    const origin = idOf(await first.turn(0));
    first.close();
    const elsewhere = await connect({ session: uniqueSession("elsewhere") });
    elsewhere.send({
      type: "response.create",
      model: MODEL,
      previous_response_id: origin,
      input: "continued",
    });
    const frames = await elsewhere.turn(0);
    expect(frames.at(-1)?.type).toBe("response.completed");
    // Another tenant cannot do the same.
    const intruder = await connect({ session: uniqueSession("intruder"), key: KEY_B });
    intruder.send({ type: "response.create", model: MODEL, previous_response_id: origin, input: "steal" });
    const [error] = await intruder.turn(0);
    expect(error).toMatchObject({ type: "error", error: { code: "previous_response_not_found" } });
    elsewhere.close();
    intruder.close();
  });

  it("isolates tenants on every route: the other tenant's ids are not found, its content never appears", async () => {
    const secret = `tenant-a-secret-${testId()}`;
    const created = await sdkClient().responses.create({ model: MODEL, input: secret });
    const b = sdkClient(KEY_B);
    await expect(b.responses.retrieve(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(b.responses.inputItems.list(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(b.responses.cancel(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(b.responses.delete(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const continued = await b.responses
      .create({ model: MODEL, input: "x", previous_response_id: created.id })
      .catch((e: unknown) => e);
    expect(continued).toBeInstanceOf(OpenAI.BadRequestError);
    // Over HTTP as over WebSocket: another tenant's id is simply not found.
    expect((continued as InstanceType<typeof OpenAI.BadRequestError>).code).toBe(
      "previous_response_not_found",
    );
    expect(JSON.stringify(continued)).not.toContain(secret);
    const stream = await workerFetch(`/v1/responses/${created.id}?stream=true`, {
      headers: { authorization: `Bearer ${KEY_B}` },
    });
    expect(stream.status).toBe(404);
    expect(await stream.text()).not.toContain(secret);
    // Same session name, other tenant: a different Durable Object.
    const session = uniqueSession("shared-name");
    const a = await sdkClient(undefined, { "session-id": session }).responses.create({
      model: MODEL,
      input: "a",
    });
    const bSame = await sdkClient(KEY_B, { "session-id": session }).responses.create({
      model: MODEL,
      input: "b",
    });
    expect(responseOwner(a.id)).not.toBe(responseOwner(bSame.id));
    // And tenant A still sees its own.
    expect((await sdkClient().responses.retrieve(created.id)).id).toBe(created.id);
  });

  it("expires store:true responses after the retention period through the alarm", async () => {
    const client = sdkClient();
    const old = await client.responses.create({ model: MODEL, input: "old" });
    // A stub per call: a stub of an aborted object stays broken.
    const stub = () => env.SESSIONS.get(env.SESSIONS.idFromString(responseOwner(old.id)!));
    await runInDurableObject(stub(), (_instance, state) => {
      state.storage.sql.exec(
        "UPDATE responses SET created_at = created_at - ? WHERE id = ?",
        31 * 24 * 60 * 60 * 1000,
        old.id,
      );
    });
    // A month later the object has long been evicted: what it kept in memory (the oldest stored
    // response it read, src/store/conversation-store.ts) is gone with it.
    await runInDurableObject(stub(), (_instance, state) => state.abort("a month later")).catch(() => {});
    await expect(client.responses.retrieve(old.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    // That request re-armed the alarm for the (now past) expiry, so workerd runs it right away.
    // (Running it here with runDurableObjectAlarm would race workerd's own run and cancel it.)
    const count = () =>
      runInDurableObject(stub(), (_instance, state) => ({
        responses: state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM responses").one().n,
        items: state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM items").one().n,
        logs: state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM event_logs").one().n,
      }));
    await expect.poll(count, { timeout: 10_000 }).toEqual({ responses: 0, items: 0, logs: 0 });
  });

  it("DELETE removes a response, its items and its log at once; its child keeps working", async () => {
    const client = sdkClient();
    const parent = await client.responses.create({ model: MODEL, input: "parent" });
    const child = await client.responses.create({
      model: MODEL,
      input: "child",
      previous_response_id: parent.id,
    });
    await client.responses.delete(parent.id);
    const stub = env.SESSIONS.get(env.SESSIONS.idFromString(responseOwner(parent.id)!));
    const leftovers = await runInDurableObject(
      stub,
      (_instance, state) =>
        state.storage.sql
          .exec<{ n: number }>(
            "SELECT (SELECT COUNT(*) FROM items WHERE response_id = ?1) + (SELECT COUNT(*) FROM event_logs WHERE response_id = ?1) AS n",
            parent.id,
          )
          .one().n,
    );
    expect(leftovers).toBe(0);
    await expect(client.responses.retrieve(parent.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const next = await client.responses.create({
      model: MODEL,
      input: "grandchild",
      previous_response_id: child.id,
    });
    expect(next.status).toBe("completed");
  });
});
