/**
 * Cancellation as OpenAI reports it (issue #11 item 5): `POST /v1/responses/{id}/cancel` aborts
 * the upstream request at once — during a long prefill and mid-stream, over a Responses HTTP
 * upstream and over the warm Responses WebSocket upstream (which recovers for the next turn) —
 * and the cancelled response keeps the output its client was sent and the usage so far.
 * What reached the upstream, and whether Deltagate went away early, is read from the simulator's
 * recorder (`aborted`) and its WebSocket connection log (`closedBy`).
 */
import { describe, expect, inject, it } from "vitest";
import { SseReader } from "../support/sse-reader.ts";
import { testId } from "../support/test-id.ts";
import { KEY_A, uniqueSession, workerFetch } from "../support/ws-client.ts";
import { connections, recorded } from "./upstream-ws-loop.ts";

const auth = { authorization: `Bearer ${KEY_A}` };

type ResponseJson = {
  id: string;
  status: string;
  output: Array<{ type: string; status?: string; content?: Array<{ text?: string }> }>;
  usage: { input_tokens: number; output_tokens: number; total_tokens: number } | null;
  previous_response_id: string | null;
};

function post(body: unknown, session: string): Promise<Response> {
  return workerFetch("/v1/responses", {
    method: "POST",
    headers: { ...auth, "content-type": "application/json", "session-id": session },
    body: JSON.stringify(body),
  });
}

async function cancel(id: string): Promise<ResponseJson> {
  const res = await workerFetch(`/v1/responses/${id}/cancel`, { method: "POST", headers: auth });
  expect(res.status).toBe(200);
  return (await res.json()) as ResponseJson;
}

/** The concatenated text deltas a client read. */
function deltas(reader: SseReader): string {
  return reader.events
    .filter((e) => e.data.type === "response.output_text.delta")
    .map((e) => String(e.data.delta))
    .join("");
}

describe("cancel", () => {
  it("aborts the upstream request during a long prefill, before its first token", async () => {
    const simulatorUrl = inject("simulatorUrl");
    const marker = `cancel-prefill-${testId()}`;
    const session = uniqueSession("cancel-prefill");
    const reader = new SseReader(
      (await post({ model: "deltagate-sim", input: `${marker} [sim:delay_ms=20000]`, stream: true }, session))
        .body!,
    );
    const created = await reader.next();
    expect(created?.data.type).toBe("response.created");
    const id = (created!.data.response as { id: string }).id;
    const cancelled = await cancel(id);
    expect(cancelled.status).toBe("cancelled");
    // OpenAI's cancelled response has no error.
    expect(cancelled).toMatchObject({ error: null });
    expect(cancelled.output).toEqual([]);
    await expect.poll(async () => (await recorded(simulatorUrl, marker))[0]?.aborted).toBe(true);
    const events = await reader.rest();
    expect(events.map((e) => e.data.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.failed",
    ]);
    expect(events.at(-1)?.data.response).toMatchObject({ id, status: "cancelled", error: null });
  });

  it("aborts a Responses HTTP upstream mid-stream; the response keeps what was streamed and its usage", async () => {
    const simulatorUrl = inject("simulatorUrl");
    const marker = `cancel-http-${testId()}`;
    const session = uniqueSession("cancel-http");
    const reader = new SseReader(
      (await post({ model: "deltagate-sim", input: `${marker} [sim:tokens=5000]`, stream: true }, session))
        .body!,
    );
    const id = ((await reader.next())!.data.response as { id: string }).id;
    await reader.until((e) => e.type === "response.output_text.delta");
    const cancelled = await cancel(id);
    expect(cancelled.status).toBe("cancelled");
    // The upstream stops at once (a 5,000-token answer takes 5 s at the simulator's pace).
    await expect
      .poll(async () => (await recorded(simulatorUrl, marker))[0]?.aborted, { timeout: 2_000 })
      .toBe(true);
    await reader.rest();
    expect(reader.events.at(-1)?.data.type).toBe("response.failed");
    // What the client was sent is the response's output: the text cut where the stream stopped.
    const [message] = cancelled.output;
    expect(message).toMatchObject({ type: "message", status: "incomplete" });
    expect(message?.content?.[0]?.text).toBe(deltas(reader));
    expect(cancelled.usage?.output_tokens).toBeGreaterThan(0);
    expect(cancelled.usage?.input_tokens).toBeGreaterThan(0);
  });

  it("closes the warm upstream WebSocket at once, and the next turn runs on a fresh one", async () => {
    const simulatorUrl = inject("simulatorUrl");
    const marker = `cancel-ws-${testId()}`;
    const session = uniqueSession("cancel-ws");
    const reader = new SseReader(
      (await post({ model: "sim-ws", input: `${marker} [sim:tokens=5000]`, stream: true }, session)).body!,
    );
    const id = ((await reader.next())!.data.response as { id: string }).id;
    await reader.until((e) => e.type === "response.output_text.delta");
    expect((await cancel(id)).status).toBe("cancelled");
    const [first] = await recorded(simulatorUrl, marker);
    await expect
      .poll(async () => (await connections(simulatorUrl, [first?.connectionId ?? 0]))[0]?.closedBy, {
        timeout: 2_000,
      })
      .toBe("client");
    await expect.poll(async () => (await recorded(simulatorUrl, marker))[0]?.aborted).toBe(true);
    await reader.rest();

    const next = await post(
      { model: "sim-ws", previous_response_id: id, input: `${marker} again [sim:tokens=5]` },
      session,
    );
    expect(next.status).toBe(200);
    const body = (await next.json()) as ResponseJson;
    expect(body.status).toBe("completed");
    const records = await recorded(simulatorUrl, marker);
    expect(records).toHaveLength(2);
    // The new socket holds nothing: the whole context goes, including the cut answer.
    expect(records[1]?.connectionId).not.toBe(records[0]?.connectionId);
    expect(records[1]?.previousResponseId).toBeNull();
    expect(records[1]?.contextItemCount).toBe(3);
  });
});
