/**
 * Affinity for stateless conversations (issue #18.1): a `POST /v1/responses` with no session and
 * no `previous_response_id` goes to the session of its conversation's affinity key
 * (src/worker/affinity.ts) — its `prompt_cache_key`, else the hash of its stable prefix — so the
 * resends of one conversation reach one Durable Object, which continues the chain with only the
 * new items upstream; other conversations go elsewhere; and one hot key holds at most
 * `AFFINITY_MAX_RUNNING` running turns, the rest going to fresh sessions.
 */
import { describe, expect, inject, it } from "vitest";
import { AFFINITY_MAX_RUNNING } from "../../src/session/http-transport.ts";
import { responseOwner } from "../../src/util/ids.ts";
import { testId } from "../support/test-id.ts";
import { KEY_A, simulatorRequests, workerFetch } from "../support/ws-client.ts";

type Item = Record<string, unknown>;
interface ResponseBody {
  id: string;
  output: Item[];
}

/** A `POST /v1/responses` naming no session. */
function postRaw(body: Record<string, unknown>): Promise<Response> {
  return workerFetch("/v1/responses", {
    method: "POST",
    headers: { authorization: `Bearer ${KEY_A}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function post(body: Record<string, unknown>): Promise<ResponseBody> {
  const res = await postRaw(body);
  const json = (await res.json()) as ResponseBody;
  expect(res.status, JSON.stringify(json)).toBe(200);
  return json;
}

const user = (text: string): Item => ({ type: "message", role: "user", content: text });

describe("affinity of stateless conversations", () => {
  it("routes the resends of one conversation to one Durable Object, which sends only the new items", async () => {
    const marker = `affinity-${testId()}`;
    const settings = { model: "sim-ws", instructions: `Affinity test ${marker}` };
    const first = [user(`${marker} hello [sim:tools=0]`)];
    const one = await post({ ...settings, input: first });
    const second = [...first, ...one.output, user(`${marker} more [sim:tools=0]`)];
    const two = await post({ ...settings, input: second });
    const third = [...second, ...two.output, user(`${marker} again [sim:tools=0]`)];
    const three = await post({ ...settings, input: third });
    const owners = [one, two, three].map((r) => responseOwner(r.id));
    expect(new Set(owners).size).toBe(1);
    const upstream = await simulatorRequests(inject("simulatorUrl"), marker);
    expect(upstream.map((r) => r.inputItemCount)).toEqual([1, 1, 1]);
    expect(upstream.map((r) => r.contextItemCount)).toEqual([1, second.length, third.length]);

    // Another conversation (another first message) goes to another object.
    const other = await post({ ...settings, input: [user(`${marker} something else [sim:tools=0]`)] });
    expect(responseOwner(other.id)).not.toBe(owners[0]);
  });

  it("keys on prompt_cache_key when the request sets one", async () => {
    const key = `pck-${testId()}`;
    const a = await post({ model: "deltagate-sim", prompt_cache_key: key, input: "first [sim:tools=0]" });
    const b = await post({ model: "deltagate-sim", prompt_cache_key: key, input: "other [sim:tools=0]" });
    const c = await post({
      model: "deltagate-sim",
      prompt_cache_key: `${key}-2`,
      input: "first [sim:tools=0]",
    });
    expect(responseOwner(a.id)).toBe(responseOwner(b.id));
    expect(responseOwner(c.id)).not.toBe(responseOwner(a.id));
  });

  it(`sends a request of a hot key elsewhere while ${AFFINITY_MAX_RUNNING} responses run in its session`, async () => {
    const hold = `affinity-hot-${testId()}`;
    const body = { model: "deltagate-sim", stream: true, input: `${hold} [sim:hold=${hold}] [sim:tools=0]` };
    // Each stream answers once the response is accepted, and its upstream then holds it running.
    const held = await Promise.all(Array.from({ length: AFFINITY_MAX_RUNNING }, () => postRaw(body)));
    const streams = await Promise.all(held.map((res) => firstEvent(res)));
    expect(new Set(streams.map((s) => responseOwner(s.id))).size).toBe(1);
    const overflow = await firstEvent(await postRaw(body));
    expect(responseOwner(overflow.id)).not.toBe(responseOwner(streams[0]!.id));
    await fetch(`${inject("simulatorUrl")}/_sim/release?hold=${encodeURIComponent(hold)}`, {
      method: "POST",
    });
    await Promise.all([...streams, overflow].map((s) => s.drained));
  });
});

/** The response id in a stream's first event (`response.created`), and the rest of it read. */
async function firstEvent(res: Response): Promise<{ id: string; drained: Promise<void> }> {
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes("\n\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  const drained = (async () => {
    while (!(await reader.read()).done) {
      // the rest of the stream, up to its terminal event
    }
  })();
  const data = text.split("\n").find((line) => line.startsWith("data: "));
  return { id: (JSON.parse(data!.slice(6)) as { response: { id: string } }).response.id, drained };
}
