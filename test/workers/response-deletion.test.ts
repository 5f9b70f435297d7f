/**
 * Deleting a response leaves nothing behind (issue #15 item 1): whichever path deletes it — the
 * end of a store:false grace window, `DELETE /v1/responses/{id}`, retention expiry — every row
 * keyed by its id goes with it, in every table of the session's SQLite: its items, the pieces of
 * values too large for one row (src/store/large-values.ts), its event log and its safety chain
 * marks (src/safety/verdict-cache.ts). The responses here carry a 3 MiB tool output, so they
 * have pieces; tenant-a's default safety policy is local (the rules), whose chain marks live in
 * memory only, so each test also gives its responses a stored chain mark, the row a remote
 * classifier's policy (or an imported chain) writes.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DEFAULT_STORE_FALSE_GRACE_MAX_MS } from "../../src/config/config.ts";
import { SHELL_TOOL } from "../support/fixtures.ts";
import { sessionStub } from "../support/session-stub.ts";
import { connect, type Frame, KEY_A, uniqueSession, workerFetch } from "../support/ws-client.ts";

const MODEL = "sim-large";
const auth = { authorization: `Bearer ${KEY_A}`, "content-type": "application/json" };
type Completed = Frame & { response: { id: string; output: Array<Record<string, unknown>> } };

const callIdOf = (response: Completed["response"]) =>
  (response.output.find((item) => item.type === "function_call") as { call_id: string }).call_id;

/**
 * Rows that name one of `ids`, per table, in every table of the session that has a `response_id`
 * or (`responses`) an `id` column — found in `sqlite_master`, so a table added later is covered.
 */
function rowsOf(session: string, ids: readonly string[]): Promise<Record<string, number>> {
  return runInDurableObject(sessionStub("tenant-a", session), (_instance, state) => {
    const sql = state.storage.sql;
    const tables = sql
      .exec<{ name: string; sql: string }>("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
      .toArray();
    const counts: Record<string, number> = {};
    for (const table of tables) {
      const column = /\bresponse_id\b/.test(table.sql)
        ? "response_id"
        : table.name === "responses"
          ? "id"
          : null;
      if (!column) continue;
      let n = 0;
      for (const id of ids) {
        n += sql
          .exec<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table.name} WHERE ${column} = ?`, id)
          .one().n;
      }
      counts[table.name] = n;
    }
    return counts;
  });
}

/** Every count of `rowsOf` is zero (the tables listed, so a failure names what was left). */
function expectNoRows(counts: Record<string, number>): void {
  expect(Object.keys(counts)).toEqual(
    expect.arrayContaining(["responses", "items", "value_pieces", "event_logs", "safety_chains"]),
  );
  expect(counts).toEqual(Object.fromEntries(Object.keys(counts).map((table) => [table, 0])));
}

/** A stored chain mark for each of `ids`, as a policy with a remote classifier writes it. */
function markChains(session: string, ids: readonly string[]): Promise<void> {
  return runInDurableObject(sessionStub("tenant-a", session), (_instance, state) => {
    for (const id of ids) {
      state.storage.sql.exec(
        "INSERT INTO safety_chains (response_id, policy, verdict) VALUES (?, 'remote-policy', ?)",
        id,
        JSON.stringify({ flagged: false, categories: {}, scores: {} }),
      );
    }
  });
}

/** A 3 MiB tool output (more than one `value_pieces` piece, never one SQLite row). */
const BIG_OUTPUT = `big\n${"ls -la → drwxr-xr-x café 漢字 🚀\n".repeat(100_000)}`;

describe("one deletion of a response", () => {
  it("a store:false chain with a multi-MB item leaves no row once its socket's grace window is over", async () => {
    const session = uniqueSession("delete-grace");
    // A socket that asked for a grace window (src/http/client-options.ts): its state outlives it.
    const grace = String(DEFAULT_STORE_FALSE_GRACE_MAX_MS);
    const ws = await connect({ session, headers: { "x-deltagate-store-false-grace": grace } });
    ws.send({ type: "response.create", model: MODEL, store: false, input: "run `ls`", tools: [SHELL_TOOL] });
    const first = (await ws.turn(0)).at(-1) as Completed;
    ws.send({
      type: "response.create",
      model: MODEL,
      store: false,
      previous_response_id: first.response.id,
      input: [{ type: "function_call_output", call_id: callIdOf(first.response), output: BIG_OUTPUT }],
      tools: [SHELL_TOOL],
    });
    const second = (await ws.turn(1)).at(-1) as Completed;
    expect(second.type).toBe("response.completed");
    const ids = [first.response.id, second.response.id];
    await markChains(session, ids);
    const before = await rowsOf(session, ids);
    expect(before.value_pieces).toBeGreaterThan(1);
    expect(before.safety_chains).toBeGreaterThan(0);

    ws.close();
    const stub = sessionStub("tenant-a", session);
    const released = () =>
      runInDurableObject(
        stub,
        (_i, state) =>
          state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM released_scopes").one().n,
      );
    await expect.poll(released, { timeout: 10_000 }).toBe(1);
    await runInDurableObject(stub, (_i, state) => {
      state.storage.sql.exec(
        "UPDATE released_scopes SET released_at = released_at - ?",
        DEFAULT_STORE_FALSE_GRACE_MAX_MS + 1_000,
      );
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expectNoRows(await rowsOf(session, ids));
  });

  it("DELETE /v1/responses/{id} of a response with a multi-MB item leaves no row of it", async () => {
    const session = uniqueSession("delete-http");
    const post = (body: Record<string, unknown>) =>
      workerFetch("/v1/responses", {
        method: "POST",
        headers: { ...auth, "session-id": session },
        body: JSON.stringify(body),
      }).then((res) => res.json() as Promise<Completed["response"]>);
    const first = await post({ model: MODEL, input: "run `ls`", tools: [SHELL_TOOL] });
    const second = await post({
      model: MODEL,
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: callIdOf(first), output: BIG_OUTPUT }],
      tools: [SHELL_TOOL],
    });
    await markChains(session, [second.id]);
    const before = await rowsOf(session, [second.id]);
    expect(before.value_pieces).toBeGreaterThan(1);
    expect(before.event_logs).toBeGreaterThan(0);
    expect(before.safety_chains).toBeGreaterThan(0);
    const deleted = await workerFetch(`/v1/responses/${second.id}`, { method: "DELETE", headers: auth });
    expect(deleted.status).toBe(200);
    expectNoRows(await rowsOf(session, [second.id]));
  });

  it("retention expiry of a response with a multi-MB item leaves no row of it", async () => {
    const session = uniqueSession("delete-expiry");
    const res = await workerFetch("/v1/responses", {
      method: "POST",
      headers: { ...auth, "session-id": session },
      body: JSON.stringify({ model: MODEL, input: `keep this\n${BIG_OUTPUT} [sim:tools=0]` }),
    });
    const { id } = (await res.json()) as { id: string };
    await markChains(session, [id]);
    const before = await rowsOf(session, [id]);
    expect(before.value_pieces).toBeGreaterThan(1);
    expect(before.safety_chains).toBeGreaterThan(0);
    const stub = sessionStub("tenant-a", session);
    await runInDurableObject(stub, (_i, state) => {
      state.storage.sql.exec("UPDATE responses SET created_at = created_at - ?", 31 * 24 * 3_600_000);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expectNoRows(await rowsOf(session, [id]));
  });

  it("a store:false HTTP response with a multi-MB item leaves no row once its request ended", async () => {
    const session = uniqueSession("delete-http-private");
    const res = await workerFetch("/v1/responses", {
      method: "POST",
      headers: { ...auth, "session-id": session },
      body: JSON.stringify({ model: MODEL, store: false, input: `private\n${BIG_OUTPUT} [sim:tools=0]` }),
    });
    expect(res.status).toBe(200);
    const { id } = (await res.json()) as { id: string };
    expectNoRows(await rowsOf(session, [id]));
  });
});
