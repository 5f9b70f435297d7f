/**
 * `item_reference` input items (issue #18): the Vercel AI SDK sends earlier reasoning items and
 * answers of store:true responses back as `{type: "item_reference", id}`. The session resolves
 * each to the item it holds under that id: a resend made partly of references still continues
 * its chain (only the new items upstream), an unmatched one sends the whole items upstream (a
 * reasoning item with its encrypted content), and a reference to an item the caller may not see
 * (unknown, another tenant's) is OpenAI's 404 with nothing stored and nothing sent upstream.
 */
import { describe, expect, inject, it } from "vitest";
import { testId } from "../support/test-id.ts";
import {
  connect,
  KEY_A,
  KEY_B,
  simulatorRequests,
  uniqueSession,
  workerFetch,
} from "../support/ws-client.ts";

type Item = Record<string, unknown>;
interface ResponseBody {
  id: string;
  status: string;
  output: Item[];
}
interface Recorded {
  inputItemCount: number | null;
  contextItemCount: number | null;
  previousResponseId: string | null;
  body: { input: Item[] };
}

const recorded = async (marker: string) =>
  (await simulatorRequests(inject("simulatorUrl"), marker)) as unknown as Recorded[];

/** One non-streamed `POST /v1/responses` in `session`: its status and body. */
async function post(session: string, body: Record<string, unknown>, key = KEY_A) {
  const res = await workerFetch("/v1/responses", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "session-id": session },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as ResponseBody & { error?: Item } };
}

const user = (id: string, text: string): Item => ({ type: "message", id, role: "user", content: text });
const reference = (item: Item | undefined): Item => ({ type: "item_reference", id: item?.id });

/** A first turn that answers with a reasoning item and a message. */
async function firstTurn(session: string, model: string, marker: string) {
  const first = [user(`msg_${testId().slice(0, 8)}`, `${marker} think [sim:reasoning=1] [sim:tokens=5]`)];
  const one = await post(session, { model, input: first });
  expect(one.status, JSON.stringify(one.json)).toBe(200);
  const reasoning = one.json.output.find((item) => item.type === "reasoning");
  const message = one.json.output.find((item) => item.type === "message");
  expect(reasoning).not.toHaveProperty("encrypted_content");
  return { first, one: one.json, reasoning, message };
}

describe("item_reference input items", () => {
  it("resolve to the session's items: a resend of references continues the chain with only the new item", async () => {
    const marker = `ref-match-${testId()}`;
    const session = uniqueSession("ref-match");
    const { first, reasoning, message } = await firstTurn(session, "sim-ws", marker);
    const next = user("msg_ref_2", `${marker} again`);
    const two = await post(session, {
      model: "sim-ws",
      input: [...first, reference(reasoning), reference(message), next],
    });
    expect(two.status, JSON.stringify(two.json)).toBe(200);

    const upstream = await recorded(marker);
    expect(
      upstream.map((r) => [r.previousResponseId !== null, r.inputItemCount, r.contextItemCount]),
    ).toEqual([
      [false, 1, 1],
      [true, 1, 4],
    ]);
    const res = await workerFetch(`/v1/responses/${two.json.id}/input_items?order=asc`, {
      headers: { authorization: `Bearer ${KEY_A}` },
    });
    const listed = ((await res.json()) as { data: Item[] }).data;
    expect(listed.map((item) => [item.type, item.id])).toEqual([
      ["message", first[0]?.id],
      ["reasoning", reasoning?.id],
      ["message", message?.id],
      ["message", "msg_ref_2"],
    ]);
  });

  it("unmatched, go upstream as the whole items (reasoning with its encrypted content)", async () => {
    const marker = `ref-full-${testId()}`;
    const session = uniqueSession("ref-full");
    const { first, reasoning, message } = await firstTurn(session, "deltagate-sim", marker);
    const input = [...first, reference(reasoning), reference(message), user("msg_ref_f", `${marker} again`)];
    // Other instructions: no chain to continue, the whole context goes upstream.
    const two = await post(session, { model: "deltagate-sim", instructions: "New.", input });
    expect(two.status, JSON.stringify(two.json)).toBe(200);

    const upstream = await recorded(marker);
    expect(upstream).toHaveLength(2);
    const sent = upstream[1]!.body.input;
    expect(sent.map((item) => item.type)).toEqual(["message", "reasoning", "message", "message"]);
    expect(sent[1]).toMatchObject({ id: reasoning?.id, encrypted_content: expect.stringMatching(/^gAAAAA/) });
    expect(sent[2]).toMatchObject({ role: "assistant", content: message?.content });
  });

  it("naming an item the caller cannot see are OpenAI's 404, with nothing stored or sent upstream", async () => {
    const marker = `ref-missing-${testId()}`;
    const session = uniqueSession("ref-missing");
    const { first, message } = await firstTurn(session, "sim-ws", marker);
    const attempts = [
      { key: KEY_A, id: "msg_never_issued" },
      // Tenant B, with the same session header (sessions are per tenant), naming A's item.
      { key: KEY_B, id: String(message?.id) },
    ];
    for (const { key, id } of attempts) {
      const res = await post(
        session,
        { model: "sim-ws", input: [...first, { type: "item_reference", id }, user("msg_x", `${marker} x`)] },
        key,
      );
      expect(res.status).toBe(404);
      expect(res.json.error).toEqual({
        type: "invalid_request_error",
        code: null,
        message: `Item with id '${id}' not found.`,
        param: "input",
      });
    }
    // An item_reference needs its id.
    const noId = await post(session, { model: "sim-ws", input: [{ type: "item_reference" }] });
    expect(noId.status).toBe(400);
    expect(await recorded(marker)).toHaveLength(1);
  });

  it("over a WebSocket: a reference resolves on the socket; an unknown one is an error event and the socket stays open", async () => {
    const marker = `ref-ws-${testId()}`;
    const ws = await connect({ session: uniqueSession("ref-ws") });
    const first = [user("msg_ws_r1", `${marker} one [sim:tokens=5]`)];
    ws.send({ type: "response.create", model: "sim-ws", input: first });
    const one = (await ws.turn(0)).at(-1) as unknown as { response: ResponseBody };
    const answer = one.response.output.find((item) => item.type === "message");
    ws.send({
      type: "response.create",
      model: "sim-ws",
      input: [...first, { type: "item_reference", id: "msg_nope" }],
    });
    expect((await ws.turn(1)).at(-1)).toMatchObject({
      type: "error",
      status: 404,
      error: { message: "Item with id 'msg_nope' not found.", param: "input" },
    });
    ws.send({
      type: "response.create",
      model: "sim-ws",
      input: [...first, reference(answer), user("msg_ws_r2", `${marker} two`)],
    });
    expect((await ws.turn(2)).at(-1)).toMatchObject({ type: "response.completed" });
    ws.close();
    const upstream = await recorded(marker);
    expect(upstream.map((r) => [r.previousResponseId !== null, r.inputItemCount])).toEqual([
      [false, 1],
      [true, 1],
    ]);
  });
});
