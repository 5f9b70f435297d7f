/**
 * Transparent deltas (issue #18.2): a client that resends its whole conversation without
 * `previous_response_id` (the Vercel AI SDK, LangChain, the Agents SDK, Codex after a reconnect)
 * gets its turn continued on the chain the session holds: only the new items go upstream (a warm
 * upstream WebSocket turn, seen in the simulator's recorder), the response is stored as a
 * continuation and still lists exactly what the client sent as its `input_items`. A resend that
 * differs in any item, setting or tool goes in full, as before; another tenant's identical
 * conversation never continues the chain; a reasoning item resent by id without its encrypted
 * content reaches the upstream with it.
 */
import { describe, expect, inject, it } from "vitest";
import { listed, SHELL_TOOL } from "../support/fixtures.ts";
import { testId } from "../support/test-id.ts";
import {
  connect,
  KEY_A,
  KEY_B,
  simulatorRequests,
  uniqueSession,
  validateWithSdk,
  workerFetch,
} from "../support/ws-client.ts";

type Item = Record<string, unknown>;
interface ResponseBody {
  id: string;
  status: string;
  previous_response_id: string | null;
  output: Item[];
}
interface Recorded {
  transport: string;
  inputItemCount: number | null;
  contextItemCount: number | null;
  previousResponseId: string | null;
  body: { input: Item[] };
}

const recorded = async (marker: string) =>
  (await simulatorRequests(inject("simulatorUrl"), marker)) as unknown as Recorded[];

/** One non-streamed `POST /v1/responses` in `session`, checked to complete. */
async function post(session: string, body: Record<string, unknown>, key = KEY_A): Promise<ResponseBody> {
  const res = await workerFetch("/v1/responses", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "session-id": session },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as ResponseBody;
  expect(res.status, JSON.stringify(json)).toBe(200);
  expect(json.status).toBe("completed");
  return json;
}

/** `GET /v1/responses/{id}/input_items` in order, every page. */
async function inputItems(id: string, key = KEY_A): Promise<Item[]> {
  const res = await workerFetch(`/v1/responses/${id}/input_items?order=asc&limit=100`, {
    headers: { authorization: `Bearer ${key}` },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: Item[] }).data;
}

/** The client's next items after `output`: an output for each tool call, else a user message. */
function answer(output: Item[], id: string, text: string): Item[] {
  const calls = output.filter((item) => item.type === "function_call");
  if (calls.length === 0) return [user(id, text)];
  return calls.map((call, n) => ({
    type: "function_call_output",
    id: `${id}_${n}`,
    call_id: call.call_id,
    output: text,
  }));
}

const user = (id: string, text: string): Item => ({
  type: "message",
  id,
  role: "user",
  content: [{ type: "input_text", text }],
});

describe("transparent deltas for full resends", () => {
  it("continues the chain upstream with only the new items; input_items are what the client sent (tool outputs with OpenAI's listed status)", async () => {
    const marker = `resend-match-${testId()}`;
    const session = uniqueSession("resend-match");
    const settings = { model: "sim-ws", instructions: "Be brief.", tools: [SHELL_TOOL] };
    const first = [user("msg_client_1", `${marker} first`)];
    const one = await post(session, { ...settings, input: first });
    const newTwo = answer(one.output, "fco_client_2", `${marker} second`);
    const second = [...first, ...one.output, ...newTwo];
    const two = await post(session, { ...settings, input: second });
    const newThree = answer(two.output, "fco_client_3", `${marker} third`);
    const third = [...second, ...two.output, ...newThree];
    const three = await post(session, { ...settings, input: third });

    const upstream = await recorded(marker);
    expect(upstream.map((r) => r.transport)).toEqual(["ws", "ws", "ws"]);
    // Only the new items travel; the upstream resolves the whole conversation.
    expect(upstream.map((r) => r.inputItemCount)).toEqual([1, newTwo.length, newThree.length]);
    expect(upstream.map((r) => r.contextItemCount)).toEqual([1, second.length, third.length]);
    expect(upstream.map((r) => r.previousResponseId === null)).toEqual([true, false, false]);
    // As the client sent: no previous_response_id on the Response object.
    expect([two.previous_response_id, three.previous_response_id]).toEqual([null, null]);
    expect(await inputItems(three.id)).toEqual(listed(third));
    expect(await inputItems(two.id)).toEqual(listed(second));
  });

  it("reports the match on the turn's timing event (WebSocket, no previous_response_id)", async () => {
    const marker = `resend-ws-${testId()}`;
    const ws = await connect({ session: uniqueSession("resend-ws"), headers: { "x-deltagate-timing": "1" } });
    const first = [user("msg_ws_1", `${marker} one`)];
    ws.send({ type: "response.create", model: "sim-ws", input: first });
    const frames = await ws.turn(0);
    await validateWithSdk(frames);
    const output = (frames.at(-1) as unknown as { response: ResponseBody }).response.output;
    const resend = [...first, ...output, user("msg_ws_2", `${marker} two`)];
    ws.send({ type: "response.create", model: "sim-ws", input: resend });
    await ws.turn(1);
    await ws.until((f) => f.filter((x) => x.type === "deltagate.timing").length === 2);
    const turns = ws.frames
      .filter((f) => f.type === "deltagate.timing")
      .map((f) => (f as unknown as { turn: Record<string, unknown> }).turn);
    expect(turns[0]).toMatchObject({ chained: false, resend_matched_items: 0, upstream_input_items: 1 });
    expect(turns[1]).toMatchObject({
      chained: false,
      resend_matched_items: first.length + output.length,
      upstream_input_items: 1,
    });
    expect(turns[1]?.upstream_request_bytes).toBeGreaterThan(0);
    ws.close();
  });

  it("sends in full a resend that differs in any item, setting or tool", async () => {
    const marker = `resend-differs-${testId()}`;
    const session = uniqueSession("resend-differs");
    const settings = { model: "sim-ws", instructions: "Be brief.", tools: [SHELL_TOOL], temperature: 0.5 };
    const first = [user("msg_d_1", `${marker} first`)];
    const one = await post(session, { ...settings, input: first });
    const next = answer(one.output, "msg_d_2", `${marker} next`);
    const edited = { ...first[0]!, content: [{ type: "input_text", text: `${marker} first, edited` }] };
    const otherTool = { ...SHELL_TOOL, name: "exec_other" };
    const variants: Array<Record<string, unknown>> = [
      { ...settings, input: [edited, ...one.output, ...next] },
      { ...settings, instructions: "Be verbose.", input: [...first, ...one.output, ...next] },
      { ...settings, tools: [SHELL_TOOL, otherTool], input: [...first, ...one.output, ...next] },
      { ...settings, temperature: 0.7, input: [...first, ...one.output, ...next] },
      { ...settings, model: "sim-ws-other", input: [...first, ...one.output, ...next] },
      { ...settings, store: false, input: [...first, ...one.output, ...next] },
    ];
    // The model's own output, altered by the client (another text, other call arguments).
    const changedOutput = one.output.map((item) => {
      if (item.type === "message") return { ...item, content: [{ type: "output_text", text: "other" }] };
      if (item.type === "function_call") return { ...item, arguments: '{"cmd":"other"}' };
      return item;
    });
    expect(changedOutput).not.toEqual(one.output);
    variants.push({ ...settings, input: [...first, ...changedOutput, ...next] });
    for (const variant of variants) await post(session, variant);
    const upstream = await recorded(marker);
    expect(upstream).toHaveLength(1 + variants.length);
    for (const request of upstream.slice(1)) {
      expect(request.previousResponseId).toBeNull();
      expect(request.inputItemCount).toBe(1 + one.output.length + next.length);
    }
  });

  it("never continues another tenant's chain, even for an identical conversation", async () => {
    const marker = `resend-tenants-${testId()}`;
    const session = uniqueSession("resend-tenants");
    const first = [user("msg_t_1", `${marker} first`)];
    const one = await post(session, { model: "sim-ws", input: first }, KEY_A);
    const resend = [...first, ...one.output, user("msg_t_2", `${marker} second`)];
    const other = await post(session, { model: "sim-ws", input: resend }, KEY_B);
    // The control: tenant A's own resend of the same conversation does continue A's chain.
    await post(session, { model: "sim-ws", input: resend }, KEY_A);
    const upstream = await recorded(marker);
    expect(upstream).toHaveLength(3);
    expect(upstream[1]?.previousResponseId).toBeNull();
    expect(upstream[1]?.inputItemCount).toBe(resend.length);
    expect(upstream[2]?.previousResponseId).not.toBeNull();
    expect(upstream[2]?.inputItemCount).toBe(resend.length - first.length - one.output.length);
    expect(other.previous_response_id).toBeNull();
    // Tenant B's response lists exactly what B sent, and tenant A's stays A's.
    expect(await inputItems(other.id, KEY_B)).toEqual(listed(resend));
    const res = await workerFetch(`/v1/responses/${one.id}`, {
      headers: { authorization: `Bearer ${KEY_B}` },
    });
    expect(res.status).toBe(404);
  });

  it("restores a reasoning item resent by id without its encrypted content", async () => {
    const marker = `resend-reasoning-${testId()}`;
    const session = uniqueSession("resend-reasoning");
    // Responses over HTTP, store:false upstream: the full context goes every turn, so the reasoning
    // item can only go with its encrypted content (which this client never asked for).
    const first = [user("msg_r_1", `${marker} think [sim:reasoning=1] [sim:tokens=5]`)];
    const one = await post(session, { model: "deltagate-sim", input: first });
    const reasoning = one.output.find((item) => item.type === "reasoning");
    expect(reasoning).toBeDefined();
    expect(reasoning).not.toHaveProperty("encrypted_content");
    const next = [user("msg_r_2", `${marker} again`)];
    // Matched (the same settings): the chain's stored reasoning goes upstream.
    await post(session, { model: "deltagate-sim", input: [...first, ...one.output, ...next] });
    // Not matched (other instructions): the resent item itself is restored from the session.
    await post(session, {
      model: "deltagate-sim",
      instructions: "New.",
      input: [...first, ...one.output, ...next],
    });
    const upstream = await recorded(marker);
    expect(upstream).toHaveLength(3);
    for (const request of upstream.slice(1)) {
      const sent = request.body.input.find((item) => item.type === "reasoning");
      expect(sent).toMatchObject({ type: "reasoning", id: reasoning?.id });
      expect(sent?.encrypted_content).toEqual(expect.stringMatching(/^gAAAAA/));
    }
  });
});
