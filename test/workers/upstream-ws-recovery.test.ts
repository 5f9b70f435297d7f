/**
 * Transparent recovery of the Responses WebSocket-mode upstream (issue #4 "Must show", second
 * bullet): the simulator loses upstream state at seeded random turns of a 30-turn tool loop —
 * the socket dropped before answering, `previous_response_not_found`, or the socket dropped right
 * after a response — and the loop completes with no client-visible error, every recovery carrying
 * the full, correctly ordered history.
 */
import { describe, expect, inject, it } from "vitest";
import { testId } from "../support/test-id.ts";
import { connect, uniqueSession } from "../support/ws-client.ts";
import { connections, entriesOf, type Recorded, recorded, runToolLoop } from "./upstream-ws-loop.ts";

/** 30 % of eligible turns get a fault; seed 7 yields all three kinds within 30 turns (ws-faults.ts). */
const FAULTS = "[sim:ws_drop_pct=30] [sim:ws_drop_seed=7]";

describe("responses-ws upstream recovery", () => {
  it("completes a 30-turn loop through seeded upstream socket drops, resending the full history each time", async () => {
    const simulatorUrl = inject("simulatorUrl");
    const marker = `drops-${testId()}`;
    const ws = await connect({ session: uniqueSession("ws-drops") });
    const loop = await runToolLoop(ws, {
      model: "sim-ws",
      prompt: `${marker}: list files with \`ls\` [sim:tools=29] ${FAULTS}`,
      rounds: 29,
      store: true,
      marker,
    });
    // Client side: 30 completed responses (checked by runToolLoop), never an error.
    expect(loop.responses).toHaveLength(30);
    expect(ws.frames.filter((f) => f.type === "error" || f.type === "response.failed")).toEqual([]);

    const records = await recorded(simulatorUrl, marker);
    const kinds = new Set(records.map((r) => r.simulatedFailure).filter((k) => k !== null));
    expect(kinds).toEqual(new Set(["ws_drop", "not_found", "ws_drop_after"]));

    const isFullHistory = (r: Recorded | undefined, items: number) => {
      expect(r?.previousResponseId).toBeNull();
      expect(r?.contextItemCount).toBe(items);
      expect(entriesOf(r?.body.input)).toEqual(loop.context.slice(0, items));
    };
    let recoveries = 0;
    for (const [i, record] of records.entries()) {
      const next = records[i + 1];
      const items = record.contextItemCount ?? -1;
      if (record.simulatedFailure === "ws_drop" || record.simulatedFailure === "not_found") {
        // The same turn again, with everything from the first user message on.
        isFullHistory(next, items);
        recoveries++;
      } else if (record.simulatedFailure === "ws_drop_after" && next) {
        // The socket died between turns: the next turn starts over on a new socket.
        isFullHistory(next, items + 2);
        expect(next.connectionId).not.toBe(record.connectionId);
        recoveries++;
      }
    }
    expect(recoveries).toBeGreaterThanOrEqual(3);
    // Every turn that followed no fault went delta-only on top of the upstream's own id.
    const afterFault = new Set(
      records.flatMap((r, i) => (r.simulatedFailure !== null ? [records[i + 1]?.seq] : [])),
    );
    for (const record of records.slice(1)) {
      if (afterFault.has(record.seq)) continue;
      expect(record.previousResponseId, `request ${record.seq}`).toMatch(/^resp_/);
      expect(record.body.input).toHaveLength(1);
    }
    // Each turn was answered exactly once, with the whole context.
    const answered = records.filter((r) => r.status === 200);
    expect(answered.map((r) => r.contextItemCount)).toEqual(loop.responses.map((_, k) => 2 * k + 1));
    // Dropped sockets were replaced, never reused.
    const used = await connections(
      simulatorUrl,
      records.map((r) => r.connectionId ?? 0),
    );
    const dropped = used.filter((c) => c.closedBy === "server");
    expect(dropped.length).toBe(records.filter((r) => r.simulatedFailure?.startsWith("ws_drop")).length);
    ws.close();
  }, 60_000);
});
