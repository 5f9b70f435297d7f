/**
 * Every frame shape screened alike (issue #23 item 4): once a socket is over its frame budget
 * (src/session/frame-budget.ts), each frame — a default-lane create, a `stream_id` create, a create
 * whose `type` is not its first member, an unknown event type, text that is not JSON — is refused
 * with 429 `websocket_rate_limit_exceeded` before it is parsed: no `JSON.parse` of it and no SQL
 * statement runs for it (the probes below), and the socket stays open and usable.
 * The frames are handed to the hibernation handler the runtime calls (`webSocketMessage`) inside the
 * object, with the clock held still for the burst (as for frames that arrive at once), so the
 * counts are exact whatever the machine's load.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { FRAME_BURST } from "../../../src/session/frame-budget.ts";
import { sessionStub } from "../../support/session-stub.ts";
import { connect, uniqueSession } from "../../support/ws-client.ts";

const MODEL = "deltagate-sim";
const SHAPES: Record<string, string> = {
  "default-lane create": JSON.stringify({ type: "response.create", model: MODEL, input: "a [sim:tokens=1]" }),
  "stream_id create": JSON.stringify({
    type: "response.create",
    model: MODEL,
    input: "b [sim:tokens=1]",
    stream_id: "side",
  }),
  "create, type not first": JSON.stringify({
    model: MODEL,
    input: "c [sim:tokens=1]",
    type: "response.create",
  }),
  "unknown event type": JSON.stringify({ type: "flood.unknown_event", n: 1 }),
  "not JSON": "{ not json",
};
const OVER = 20;

describe("a socket over its frame budget", () => {
  it("refuses every frame shape before it is parsed, with no SQL, and stays open", async () => {
    const session = uniqueSession("frame-budget");
    const ws = await connect({ session });
    const texts = new Set(Object.values(SHAPES));
    const result = await runInDurableObject(sessionStub("tenant-a", session), async (instance, state) => {
      const [server] = state.getWebSockets();
      if (!server) throw new Error("no socket");
      // Probes: JSON.parse of one of the frames above, per shape; every SQL statement.
      const parsed = new Map<string, number>();
      const parse = JSON.parse;
      JSON.parse = ((text: string, reviver?: Parameters<typeof parse>[1]) => {
        if (texts.has(text)) parsed.set(text, (parsed.get(text) ?? 0) + 1);
        return parse(text, reviver);
      }) as typeof JSON.parse;
      const sql = state.storage.sql;
      const exec = sql.exec.bind(sql);
      let statements = 0;
      sql.exec = ((query: string, ...bindings: unknown[]) => {
        statements++;
        return exec(query, ...bindings);
      }) as typeof sql.exec;
      // The statement probe counts (a frame's ordinary path may run none: nothing released).
      sql.exec("SELECT 1");
      const probeCounts = statements === 1;
      statements = 0;
      // The clock stands still for the burst, as for frames that arrive at once: the counts are
      // exact however long this machine takes to run the handler hundreds of times.
      const clock = Date.now;
      const frozen = clock();
      Date.now = () => frozen;
      const runs: Promise<void>[] = [];
      try {
        // Within budget: each shape once takes the ordinary path (parsed; the probe sees it).
        for (const text of Object.values(SHAPES)) runs.push(instance.webSocketMessage(server, text));
        const parsedWithin = Object.fromEntries(
          Object.entries(SHAPES).map(([s, t]) => [s, parsed.get(t) ?? 0]),
        );
        // The rest of the burst.
        const filler = JSON.stringify({ type: "response.processed" });
        for (let i = Object.keys(SHAPES).length; i < FRAME_BURST; i++) {
          runs.push(instance.webSocketMessage(server, filler));
        }
        // Over budget: every shape, OVER times each.
        parsed.clear();
        statements = 0;

        for (let i = 0; i < OVER; i++) {
          for (const text of Object.values(SHAPES)) runs.push(instance.webSocketMessage(server, text));
        }
        const statementsOver = statements;
        await Promise.all(runs);
        const parsedOver = Object.fromEntries(
          Object.entries(SHAPES).map(([s, t]) => [s, parsed.get(t) ?? 0]),
        );
        return { parsedWithin, probeCounts, parsedOver, statementsOver };
      } finally {
        Date.now = clock;
        JSON.parse = parse;
        sql.exec = exec;
      }
    });
    // The probes see the ordinary path: each shape parsed (the not-JSON text too: it fails; a
    // refused frame twice, for its lane); the statement probe counts what runs.
    for (const shape of Object.keys(SHAPES)) expect(result.parsedWithin[shape], shape).toBeGreaterThan(0);
    expect(result.probeCounts).toBe(true);
    // Over budget: none parsed, no SQL.
    for (const shape of Object.keys(SHAPES)) expect(result.parsedOver[shape], shape).toBe(0);
    expect(result.statementsOver).toBe(0);

    const limited = () =>
      ws.frames.filter(
        (f) =>
          f.type === "error" &&
          (f as { error?: { code?: string } }).error?.code === "websocket_rate_limit_exceeded",
      );
    const over = OVER * Object.keys(SHAPES).length;
    await ws.until(() => limited().length >= over);
    expect(limited()).toHaveLength(over);
    for (const refusal of limited()) {
      expect(refusal).toMatchObject({
        status: 429,
        error: { type: "rate_limit_error", headers: { "retry-after": "1" } },
      });
      expect(refusal.stream_id).toBeUndefined();
    }
    // Within budget, the ordinary answers: the unknown type and the non-JSON text are 400s.
    const codes = ws.frames
      .filter((f) => f.type === "error" && f !== undefined)
      .map((f) => (f as { error?: { code?: string } }).error?.code);
    expect(codes.filter((code) => code === "invalid_json")).toHaveLength(1);
    // The socket stays open; once the budget refilled (a second later), a turn runs again.
    expect(ws.closeEvent).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    ws.send({ type: "response.create", model: MODEL, input: "after [sim:tokens=2]", stream_id: "after" });
    const after = await ws.turn(0, "after");
    expect(after.at(-1)?.type).toBe("response.completed");
    ws.close();
  });
});
