/**
 * A flood of creates on one socket (issue #19 §4): past the 64 queued, each create is refused with
 * 429 `websocket_queue_full` on its lane — the default lane's before the frame is parsed
 * (src/session/flood-screen.ts) — the socket stays open, the queued creates run once the running one
 * ends, and another session's turn completes meanwhile; a refused frame runs no SQL (nothing but the
 * screen runs for it). The flood stays within the socket's frame budget (frame-budget.ts); past it,
 * every frame is refused unread (frame-budget.test.ts).
 */
import { describe, expect, inject, it } from "vitest";
import { FRAME_BURST } from "../../../src/session/frame-budget.ts";
import { MAX_QUEUED } from "../../../src/session/lanes.ts";
import { recordSql } from "../../support/session-stub.ts";
import { connect, uniqueSession } from "../../support/ws-client.ts";

const MODEL = "deltagate-sim";
// Within the socket's frame budget (a flood past it: frame-budget.test.ts), so every count is exact.
const EXTRA = FRAME_BURST - MAX_QUEUED - 2;

describe("flood of creates on one socket", () => {
  it("refuses what does not fit, cheaply, and keeps the socket and its neighbours working", async () => {
    const hold = uniqueSession("flood-hold");
    const ws = await connect({ session: uniqueSession("flood") });
    ws.send({ type: "response.create", model: MODEL, input: `running [sim:hold=${hold}]` });
    await ws.until((frames) => frames.some((f) => f.type === "response.created"));
    const tiny = JSON.stringify({ type: "response.create", model: MODEL, input: "x [sim:tokens=1]" });
    for (let i = 0; i < MAX_QUEUED + EXTRA; i++) ws.send(tiny);
    // A named lane's create takes the ordinary path: refused on its own lane.
    ws.send({ type: "response.create", model: MODEL, input: "named", stream_id: "side" });
    const refusals = () =>
      ws.frames.filter(
        (f) =>
          f.type === "error" && (f as { error?: { code?: string } }).error?.code === "websocket_queue_full",
      );
    await ws.until(() => refusals().length >= EXTRA + 1, 30_000);
    expect(refusals().filter((f) => f.stream_id === undefined)).toHaveLength(EXTRA);
    expect(refusals().filter((f) => f.stream_id === "side")).toHaveLength(1);
    for (const refusal of refusals()) expect((refusal as { status?: number }).status).toBe(429);
    // A neighbour's turn meanwhile.
    const quiet = await connect({ session: uniqueSession("flood-neighbour") });
    quiet.send({ type: "response.create", model: MODEL, input: "quiet [sim:tokens=3]" });
    expect((await quiet.turn(0)).at(-1)?.type).toBe("response.completed");
    quiet.close();
    // The socket is usable: the running response ends, the 64 queued ones run.
    await fetch(`${inject("simulatorUrl")}/_sim/release?hold=${hold}`, { method: "POST" });
    await ws.until(
      (frames) => frames.filter((f) => f.type === "response.completed").length === MAX_QUEUED + 1,
      60_000,
    );
    expect(ws.closeEvent).toBeNull();
    ws.close();
  });
});

describe("a create refused as a flood", () => {
  it("costs its session no storage work (the screen runs before the hibernation handler's other work)", async () => {
    const hold = uniqueSession("flood-sql-hold");
    const session = uniqueSession("flood-sql");
    const ws = await connect({ session });
    ws.send({ type: "response.create", model: MODEL, input: `running [sim:hold=${hold}]` });
    await ws.until((frames) => frames.some((f) => f.type === "response.created"));
    const tiny = JSON.stringify({ type: "response.create", model: MODEL, input: "x [sim:tokens=1]" });
    for (let i = 0; i < MAX_QUEUED; i++) ws.send(tiny);
    // A frame after the queue filled is answered only once the 64 were queued.
    ws.send(tiny);
    const refused = () => ws.frames.filter((f) => f.type === "error").length;
    await ws.until(() => refused() === 1);
    const seen = await recordSql("tenant-a", session);
    for (let i = 0; i < 100; i++) ws.send(tiny);
    await ws.until(() => refused() === 101);
    // Before the screen, each refused frame ran the store:false purge's read (100 statements here).
    // What may land in this window is the tenant gate's one background sync, 1 s after the first
    // create was admitted (src/tenancy/tenant-gate.ts `SYNC_MS`): a handful of statements, none
    // of them per frame.
    const duringFlood = [...seen];
    expect(duringFlood.filter((q) => q.includes("released_scopes"))).toEqual([]);
    expect(duringFlood.length).toBeLessThan(10);
    // The probe is on the right object: the turns that run once the hold is released use SQL.
    await fetch(`${inject("simulatorUrl")}/_sim/release?hold=${hold}`, { method: "POST" });
    // Every queued create runs to its end before the socket closes: nothing of this test's work
    // outlives it.
    await ws.until(
      (frames) => frames.filter((f) => f.type === "response.completed").length === MAX_QUEUED + 1,
      60_000,
    );
    expect(seen.length).toBeGreaterThan(0);
    ws.close();
  });
});
