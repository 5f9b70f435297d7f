/**
 * One visibility rule (issue #15 item 2, src/session/visibility.ts): a store:true response past
 * `RESPONSE_RETENTION_DAYS` is gone for every purpose at once — not continuable (WebSocket and
 * HTTP), not resumable, not readable — even while the alarm that purges it has not run yet.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sessionStub } from "../support/session-stub.ts";
import { connect, type Frame, KEY_A, uniqueSession, workerFetch } from "../support/ws-client.ts";

const MODEL = "deltagate-sim";
const auth = { authorization: `Bearer ${KEY_A}`, "content-type": "application/json" };
/** Past the default retention (30 days). */
const AGE_MS = 31 * 24 * 3_600_000;

describe("one visibility rule", () => {
  it("a store:true parent past retention, not purged yet, is neither continuable nor readable", async () => {
    const session = uniqueSession("visibility-retention");
    const ws = await connect({ session });
    ws.send({ type: "response.create", model: MODEL, input: "remember me [sim:tools=0]" });
    const id = ((await ws.turn(0)).at(-1) as Frame & { response: { id: string } }).response.id;
    const stub = sessionStub("tenant-a", session);
    const present = () =>
      runInDurableObject(
        stub,
        (_i, state) =>
          state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM responses WHERE id = ?", id).one()
            .n,
      );
    await runInDurableObject(stub, (_i, state) => {
      state.storage.sql.exec("UPDATE responses SET created_at = created_at - ? WHERE id = ?", AGE_MS, id);
    });

    // Not continuable over WebSocket, not resumable (the alarm has not purged it: still stored).
    ws.send({ type: "response.create", model: MODEL, previous_response_id: id, input: "go on" });
    expect((await ws.turn(1))[0]).toMatchObject({
      type: "error",
      error: { code: "previous_response_not_found" },
    });
    ws.send({ type: "deltagate.response.resume", response_id: id, starting_after: -1 });
    expect((await ws.turn(2))[0]).toMatchObject({ type: "error", status: 404 });
    expect(await present()).toBe(1);

    // Not continuable over HTTP, not readable.
    const continued = await workerFetch("/v1/responses", {
      method: "POST",
      headers: { ...auth, "session-id": session },
      body: JSON.stringify({ model: MODEL, previous_response_id: id, input: "go on" }),
    });
    expect(continued.status).toBe(400);
    expect(((await continued.json()) as { error: unknown }).error).toMatchObject({
      code: "previous_response_not_found",
    });
    expect((await workerFetch(`/v1/responses/${id}`, { headers: auth })).status).toBe(404);
    ws.close();
  });
});
