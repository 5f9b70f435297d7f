/**
 * Hostile suite, `starting_after` (issue #10 item 5): the resume cursor is parsed strictly. An
 * empty value used to read as 0 and silently skip event 0; now every value that is not a decimal
 * integer from -1 (all events, as when omitted) to 2^53 − 1 is 400 `invalid_request_error` with
 * `param: "starting_after"`, over HTTP (`GET /v1/responses/{id}?stream=true&starting_after=…`) and
 * WebSocket (`deltagate.response.resume`), and the socket stays open.
 */
import { describe, expect, it } from "vitest";
import { connect, KEY_A, uniqueSession, workerFetch } from "../../support/ws-client.ts";

const MODEL = "deltagate-sim";
const auth = { authorization: `Bearer ${KEY_A}`, "content-type": "application/json" };

async function stored(session: string): Promise<string> {
  const res = await workerFetch("/v1/responses", {
    method: "POST",
    headers: { ...auth, "session-id": session },
    body: JSON.stringify({ model: MODEL, input: "hello" }),
  });
  return ((await res.json()) as { id: string }).id;
}

function sequenceNumbers(sse: string): number[] {
  return [...sse.matchAll(/"sequence_number":(\d+)/g)].map((m) => Number(m[1]));
}

describe("hostile: starting_after", () => {
  it.each([
    "",
    "-2",
    "1.5",
    "1e3",
    "0x10",
    "+1",
    " 1",
    "01",
    "abc",
    "9007199254740992",
    "99999999999999999999",
  ])("HTTP starting_after=%j is a 400 naming the parameter", async (value) => {
    const id = await stored(uniqueSession("starting-after"));
    const res = await workerFetch(
      `/v1/responses/${id}?stream=true&starting_after=${encodeURIComponent(value)}`,
      {
        headers: auth,
      },
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: unknown }).error).toMatchObject({
      type: "invalid_request_error",
      param: "starting_after",
    });
  });

  it("HTTP: -1 and omitted replay from event 0, N replays after N, past the end only the terminal event", async () => {
    const id = await stored(uniqueSession("starting-after-ok"));
    const replay = async (query: string) =>
      sequenceNumbers(
        await (await workerFetch(`/v1/responses/${id}?stream=true${query}`, { headers: auth })).text(),
      );
    const all = await replay("");
    expect(all[0]).toBe(0);
    expect(await replay("&starting_after=-1")).toEqual(all);
    expect(await replay("&starting_after=0")).toEqual(all.slice(1));
    const last = all.at(-1) ?? -1;
    expect(await replay(`&starting_after=${last}`)).toEqual([]);
    // Past the end (a client sent events the log never got before a restart): the stream still ends.
    expect(await replay(`&starting_after=${Number.MAX_SAFE_INTEGER}`)).toEqual([last]);
  });

  it.each([1.5, -2, 2 ** 53, "1", null])(
    "WebSocket deltagate.response.resume starting_after %j is a 400 event; the socket stays open",
    async (value) => {
      const session = uniqueSession("starting-after-ws");
      const id = await stored(session);
      const ws = await connect({ session });
      ws.send({ type: "deltagate.response.resume", response_id: id, starting_after: value });
      expect((await ws.turn(0))[0]).toMatchObject({
        type: "error",
        status: 400,
        error: { type: "invalid_request_error", param: "starting_after" },
      });
      ws.send({ type: "deltagate.response.resume", response_id: id, starting_after: 0 });
      await ws.until((frames) => frames.some((f) => f.type === "response.completed"));
      expect(ws.frames.filter((f) => f.type !== "error")[0]?.sequence_number).toBe(1);
      ws.close();
    },
  );
});
