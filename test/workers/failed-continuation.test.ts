/**
 * A failed continuation evicts the store:false response it referenced (issue #17 item 2; OpenAI's
 * WebSocket mode rule, src/engine/failed-continuation.ts): after a same-lane continuation fails
 * with a 4xx/5xx — a request-level `error` (here an orphan `function_call_output`) or a
 * `response.failed` (an upstream 400) — the retry on the same socket gets
 * `previous_response_not_found`. A failed fork from another lane keeps the shared parent, so does
 * a parent another response already builds on, and a store:true parent is never evicted.
 */
import { describe, expect, it } from "vitest";
import { connect, type Frame, type TestSocket, uniqueSession } from "../support/ws-client.ts";

const MODEL = "deltagate-sim";
const ORPHAN_OUTPUT = [{ type: "function_call_output", call_id: "call_missing", output: "no such call" }];

const idOf = (frames: Frame[]) => (frames.at(-1) as unknown as { response: { id: string } }).response.id;

/** Sends a create on `ws` and returns the frames of its `n`-th turn on `lane`. */
async function create(ws: TestSocket, n: number, body: Record<string, unknown>, lane?: string) {
  ws.send({ type: "response.create", model: MODEL, ...(lane ? { stream_id: lane } : {}), ...body });
  return ws.turn(n, lane);
}

/** The `error.code` of a turn's frames: its request-level `error` event, else its terminal event's. */
function errorCode(frames: Frame[]): string | null {
  const last = frames.at(-1) as {
    type: string;
    error?: { code?: string };
    response?: { error?: { code?: string } };
  };
  if (last.type === "error") return last.error?.code ?? null;
  return last.response?.error?.code ?? null;
}

describe("a failed continuation", () => {
  it("evicts its store:false parent after a request-level error: the retry gets previous_response_not_found", async () => {
    const ws = await connect({ session: uniqueSession("evict-error") });
    const parent = idOf(await create(ws, 0, { store: false, input: "Remember: ember." }));
    const failed = await create(ws, 1, { store: false, previous_response_id: parent, input: ORPHAN_OUTPUT });
    expect(failed.at(-1)).toMatchObject({ type: "error", status: 400 });
    const retry = await create(ws, 2, { store: false, previous_response_id: parent, input: "stale?" });
    expect(retry.at(-1)).toMatchObject({
      type: "error",
      status: 400,
      error: { code: "previous_response_not_found", param: "previous_response_id" },
    });
    // A new chain with the full context still works on the same socket.
    expect((await create(ws, 3, { store: false, input: "start over" })).at(-1)?.type).toBe(
      "response.completed",
    );
    ws.close();
  });

  it("evicts its store:false parent after response.failed (an upstream 400)", async () => {
    const ws = await connect({ session: uniqueSession("evict-failed") });
    const parent = idOf(await create(ws, 0, { store: false, input: "one" }));
    const failed = await create(ws, 1, {
      store: false,
      previous_response_id: parent,
      input: "two [sim:fail=status:400]",
    });
    expect(failed.at(-1)?.type).toBe("response.failed");
    const retry = await create(ws, 2, { store: false, previous_response_id: parent, input: "three" });
    expect(errorCode(retry)).toBe("previous_response_not_found");
    ws.close();
  });

  it("keeps the parent when the failed continuation is a fork from another lane", async () => {
    const ws = await connect({ session: uniqueSession("evict-fork") });
    const parent = idOf(await create(ws, 0, { store: false, input: "main lane" }));
    const fork = await create(
      ws,
      0,
      { store: false, previous_response_id: parent, input: ORPHAN_OUTPUT },
      "side",
    );
    expect(fork.at(-1)).toMatchObject({ type: "error", status: 400, stream_id: "side" });
    const next = await create(ws, 1, { store: false, previous_response_id: parent, input: "still here?" });
    expect(next.at(-1)?.type).toBe("response.completed");
    ws.close();
  });

  it("keeps a parent on a named lane when the failure is on another lane, and evicts it on its own", async () => {
    const ws = await connect({ session: uniqueSession("evict-lanes") });
    const parent = idOf(await create(ws, 0, { store: false, input: "lane a" }, "a"));
    const elsewhere = await create(ws, 0, {
      store: false,
      previous_response_id: parent,
      input: ORPHAN_OUTPUT,
    });
    expect(elsewhere.at(-1)).toMatchObject({ type: "error", status: 400 });
    const same = await create(
      ws,
      1,
      { store: false, previous_response_id: parent, input: ORPHAN_OUTPUT },
      "a",
    );
    expect(same.at(-1)).toMatchObject({ type: "error", status: 400 });
    const retry = await create(ws, 2, { store: false, previous_response_id: parent, input: "again" }, "a");
    expect(errorCode(retry)).toBe("previous_response_not_found");
    ws.close();
  });

  it("keeps a parent another response builds on, and never evicts a store:true parent", async () => {
    const ws = await connect({ session: uniqueSession("evict-shared") });
    const shared = idOf(await create(ws, 0, { store: false, input: "one" }));
    await create(ws, 1, { store: false, previous_response_id: shared, input: "two" });
    await create(ws, 2, { store: false, previous_response_id: shared, input: ORPHAN_OUTPUT });
    const rewind = await create(ws, 3, { store: false, previous_response_id: shared, input: "two again" });
    expect(rewind.at(-1)?.type).toBe("response.completed");

    const stored = idOf(await create(ws, 4, { input: "stored" }));
    await create(ws, 5, { previous_response_id: stored, input: ORPHAN_OUTPUT });
    const after = await create(ws, 6, { previous_response_id: stored, input: "still stored" });
    expect(after.at(-1)?.type).toBe("response.completed");
    ws.close();
  });
});
