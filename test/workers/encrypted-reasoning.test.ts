/**
 * Stateless reasoning (issue #11 item 2), against the strict reference simulator, which answers
 * like OpenAI: a reasoning item replayed by id only to a `store: false` upstream is 404, altered
 * `encrypted_content` or one under another id is `invalid_encrypted_content`, `encrypted_content`
 * comes back only when `include` asks for it, a model that does not reason refuses that `include`.
 * Deltagate asks every Responses upstream for encrypted reasoning, stores it as received and sends
 * it back byte-exact — on the next turn, after a WebSocket-mode recovery, after a fallback to
 * another route of the same provider — but never to another provider, and shows it to a client
 * only when the client's own request asked for it.
 */
import { evictDurableObject } from "cloudflare:test";
import type OpenAI from "openai";
import { describe, expect, inject, it } from "vitest";
import { sdkClient } from "../support/sdk-client.ts";
import { sessionStub } from "../support/session-stub.ts";
import { testId } from "../support/test-id.ts";
import {
  connect,
  type Frame,
  simulatorRequests,
  type TestSocket,
  uniqueSession,
  validateWithSdk,
} from "../support/ws-client.ts";

const ENCRYPTED = "reasoning.encrypted_content";
type Item = Record<string, unknown>;
interface Recorded {
  transport: string;
  previousResponseId: string | null;
  simulatedFailure: string | null;
  status: number | null;
  body: { input: Item[]; include?: string[] };
}

const recorded = async (marker: string, url = inject("simulatorUrl")) =>
  (await simulatorRequests(url, marker)) as unknown as Recorded[];

/** Sends a create on `ws` and returns the frames of its `n`-th response, checked by the SDK. */
async function wsTurn(ws: TestSocket, n: number, body: Record<string, unknown>): Promise<Frame[]> {
  ws.send({ type: "response.create", ...body });
  const frames = await ws.turn(n);
  expect(frames.at(-1)?.type, JSON.stringify(frames.at(-1))).toBe("response.completed");
  await validateWithSdk(frames);
  return frames;
}

const responseOf = (frames: Frame[]) =>
  (frames.at(-1) as unknown as { response: { id: string; output: Item[] } }).response;

/** The reasoning item of a response and the item that follows it, as the client saw them. */
function reasoningOf(frames: Frame[]): { reasoning: Item; following: Item } {
  const output = responseOf(frames).output;
  const index = output.findIndex((item) => item.type === "reasoning");
  expect(index).toBeGreaterThanOrEqual(0);
  return { reasoning: output[index]!, following: output[index + 1]! };
}

/** Every place a client sees an item in `frames` (event items and terminal outputs). */
function itemsSeen(frames: Frame[]): Item[] {
  return frames.flatMap((f) => {
    const item = f.item as Item | undefined;
    const output = (f.response as { output?: Item[] } | undefined)?.output ?? [];
    return [...(item ? [item] : []), ...output];
  });
}

describe("encrypted reasoning under store:false", () => {
  it("sends turn 1's reasoning item byte-exact on turn 2 (Responses HTTP, full context), with its following item's id", async () => {
    const marker = `rs-turn2-${testId()}`;
    const ws = await connect({ session: uniqueSession("rs-turn2") });
    const common = { model: "deltagate-sim", store: false, include: [ENCRYPTED] };
    const first = await wsTurn(ws, 0, {
      ...common,
      input: `${marker} think [sim:reasoning=1] [sim:tokens=5]`,
    });
    const { reasoning, following } = reasoningOf(first);
    expect(reasoning.encrypted_content).toEqual(expect.stringMatching(/^gAAAAA/));
    await wsTurn(ws, 1, { ...common, previous_response_id: responseOf(first).id, input: `${marker} again` });
    const [one, two] = await recorded(marker);
    expect(one?.body.include).toEqual([ENCRYPTED]);
    expect(two?.body.input.map((item) => item.type)).toEqual(["message", "reasoning", "message", "message"]);
    // Exactly the item the upstream issued (the client asked for encrypted_content, so it saw it whole).
    expect(two?.body.input[1]).toStrictEqual(reasoning);
    expect(two?.body.input[2]?.id).toBe(following.id);
    ws.close();
  });

  it("asks for encrypted reasoning when the client did not, replays it, and never shows it to that client", async () => {
    const marker = `rs-hidden-${testId()}`;
    const ws = await connect({ session: uniqueSession("rs-hidden") });
    const common = { model: "deltagate-sim", store: false, include: ["message.output_text.logprobs"] };
    const first = await wsTurn(ws, 0, {
      ...common,
      input: `${marker} think [sim:reasoning=1] [sim:tokens=5]`,
    });
    const second = await wsTurn(ws, 1, {
      ...common,
      previous_response_id: responseOf(first).id,
      input: `${marker} again [sim:reasoning=1] [sim:tokens=5]`,
    });
    for (const frames of [first, second]) {
      const seen = itemsSeen(frames).filter((item) => item.type === "reasoning");
      expect(seen.length).toBeGreaterThan(0);
      expect(JSON.stringify(frames)).not.toMatch(/encrypted_content|deltagate_origin/);
    }
    const [one, two] = await recorded(marker);
    expect(one?.body.include).toEqual(["message.output_text.logprobs", ENCRYPTED]);
    expect(two?.body.include).toEqual(["message.output_text.logprobs", ENCRYPTED]);
    const replayed = two?.body.input[1];
    expect(replayed).toMatchObject({ type: "reasoning", id: reasoningOf(first).reasoning.id });
    expect(replayed?.encrypted_content).toEqual(expect.stringMatching(/^gAAAAA/));
    expect(replayed).not.toHaveProperty("deltagate_origin");
    ws.close();
  });

  it("Responses WebSocket mode: asks on every turn, and a full-context recovery carries the reasoning byte-exact", async () => {
    const marker = `rs-ws-${testId()}`;
    const ws = await connect({ session: uniqueSession("rs-ws") });
    const common = { model: "sim-ws", store: false, include: [ENCRYPTED] };
    const first = await wsTurn(ws, 0, {
      ...common,
      input: `${marker} think [sim:reasoning=1] [sim:tokens=5]`,
    });
    const { reasoning, following } = reasoningOf(first);
    const second = await wsTurn(ws, 1, {
      ...common,
      previous_response_id: responseOf(first).id,
      input: `${marker} go on [sim:reasoning=1] [sim:tokens=5]`,
    });
    // The upstream loses the connection (its 60-minute limit) before turn 3's delta.
    await wsTurn(ws, 2, {
      ...common,
      previous_response_id: responseOf(second).id,
      input: `${marker} and again [sim:ws_limit=1]`,
    });
    const frames = await recorded(marker);
    expect(frames.map((f) => [f.previousResponseId === null, f.simulatedFailure])).toEqual([
      [true, null],
      [false, null], // turn 2: the delta on the upstream's own id
      [false, "ws_limit"], // turn 3: the delta, refused
      [true, null], // turn 3 again, the full context on a fresh socket
    ]);
    for (const frame of frames) expect(frame.body.include).toEqual([ENCRYPTED]);
    const recovery = frames[3]!.body.input;
    expect(recovery.map((item) => item.type)).toEqual([
      "message",
      "reasoning",
      "message",
      "message",
      "reasoning",
      "message",
      "message",
    ]);
    expect(recovery[1]).toStrictEqual(reasoning);
    expect(recovery[2]?.id).toBe(following.id);
    expect(recovery[4]).toStrictEqual(reasoningOf(second).reasoning);
    ws.close();
  });

  it("Responses WebSocket mode: asks for it when the client did not, and hides it from that client", async () => {
    const marker = `rs-ws-hidden-${testId()}`;
    const ws = await connect({ session: uniqueSession("rs-ws-hidden") });
    const first = await wsTurn(ws, 0, {
      model: "sim-ws",
      store: false,
      input: `${marker} think [sim:reasoning=1] [sim:tokens=5]`,
    });
    expect(itemsSeen(first).some((item) => item.type === "reasoning")).toBe(true);
    expect(JSON.stringify(first)).not.toMatch(/encrypted_content|deltagate_origin/);
    const [frame] = await recorded(marker);
    expect(frame?.body.include).toEqual([ENCRYPTED]);
    ws.close();
  });

  it("after a fallback to another route of the same provider, the reasoning item reaches it byte-exact", async () => {
    const marker = `rs-fb-same-${testId()}`;
    const ws = await connect({ session: uniqueSession("rs-fb-same") });
    const common = { model: "sim-fb-same", store: false, include: [ENCRYPTED] };
    const first = await wsTurn(ws, 0, {
      ...common,
      input: `${marker} think [sim:reasoning=1] [sim:tokens=5]`,
    });
    const { reasoning, following } = reasoningOf(first);
    // Every WebSocket attempt of turn 2 is dropped: the chain falls back to the HTTP route.
    await wsTurn(ws, 1, {
      ...common,
      previous_response_id: responseOf(first).id,
      input: `${marker} again [sim:ws_drop=1]`,
    });
    const requests = await recorded(marker);
    expect(requests.map((r) => r.transport)).toEqual(["ws", "ws", "ws", "ws", "http"]);
    const fallback = requests.at(-1)!.body;
    expect(fallback.include).toEqual([ENCRYPTED]);
    expect(fallback.input[1]).toStrictEqual(reasoning);
    expect(fallback.input[2]?.id).toBe(following.id);
    ws.close();
  });

  it("after a fallback to another provider, its reasoning is left out (the other provider could not verify it)", async () => {
    const marker = `rs-fb-other-${testId()}`;
    const ws = await connect({ session: uniqueSession("rs-fb-other") });
    const common = { model: "sim-fb-other", store: false, include: [ENCRYPTED] };
    const first = await wsTurn(ws, 0, {
      ...common,
      input: `${marker} think [sim:reasoning=1] [sim:tokens=5]`,
    });
    await wsTurn(ws, 1, {
      ...common,
      previous_response_id: responseOf(first).id,
      input: `${marker} again [sim:ws_drop=1]`,
    });
    const [other] = await recorded(marker, inject("otherProviderUrl"));
    expect(other?.status).toBe(200);
    expect(other?.body.input.map((item) => item.type)).toEqual(["message", "message", "message"]);
    expect(other?.body.input.every((item) => !("id" in item))).toBe(true);
    ws.close();
  });
});

describe("encrypted reasoning over HTTP (store:true)", () => {
  it("is hidden from a client that did not ask (retrieve, input_items) and shown to one that did", async () => {
    const client = sdkClient();
    const marker = `rs-http-${testId()}`;
    const plain = await client.responses.create({
      model: "deltagate-sim",
      input: `${marker} think [sim:reasoning=1] [sim:tokens=5]`,
    });
    const child = await client.responses.create({
      model: "deltagate-sim",
      previous_response_id: plain.id,
      input: `${marker} again`,
    });
    expect(child.status).toBe("completed");
    const shownPlain = [
      ...plain.output,
      ...(await client.responses.retrieve(plain.id)).output,
      ...(await client.responses.inputItems.list(child.id)).data,
    ];
    expect(shownPlain.filter((item) => item.type === "reasoning")).toHaveLength(3);
    expect(JSON.stringify(shownPlain)).not.toMatch(/encrypted_content|deltagate_origin/);

    const asked = await client.responses.create({
      model: "deltagate-sim",
      include: [ENCRYPTED],
      input: `${marker} think more [sim:reasoning=1] [sim:tokens=5]`,
    });
    const askedChild = await client.responses.create({
      model: "deltagate-sim",
      include: [ENCRYPTED],
      previous_response_id: asked.id,
      input: `${marker} and more`,
    });
    const shownAsked = [
      ...asked.output,
      ...(await client.responses.retrieve(asked.id)).output,
      ...(await client.responses.inputItems.list(askedChild.id)).data,
    ].filter((item) => item.type === "reasoning");
    expect(shownAsked).toHaveLength(3);
    for (const item of shownAsked) {
      expect(item).toMatchObject({ encrypted_content: expect.stringMatching(/^gAAAAA/) });
      expect(item).not.toHaveProperty("deltagate_origin");
    }
  });

  it("sends a client's id-less reasoning item without an invented id", async () => {
    const client = sdkClient();
    const marker = `rs-noid-${testId()}`;
    const first = await client.responses.create({
      model: "deltagate-sim",
      include: [ENCRYPTED],
      input: `${marker} think [sim:reasoning=1] [sim:tokens=5]`,
    });
    const reasoning = first.output.find((item) => item.type === "reasoning");
    const message = first.output.find((item) => item.type === "message");
    if (reasoning?.type !== "reasoning" || message?.type !== "message") throw new Error("no reasoning turn");
    // The client manages its own context and replays the items without ids, as Codex does.
    // (The SDK's input type wants ids on these items; the API takes them without.)
    const { id: _rid, ...reasoningNoId } = reasoning;
    const input = [
      { role: "user", content: `${marker} think` },
      reasoningNoId,
      { role: "assistant", content: message.content },
      { role: "user", content: `${marker} again` },
    ] as unknown as OpenAI.Responses.ResponseInput;
    const next = await client.responses.create({ model: "deltagate-sim", input });
    expect(next.status).toBe("completed");
    const sent = (await recorded(marker)).at(-1)!.body.input;
    expect(sent[1]).toStrictEqual(reasoningNoId);
    expect(sent.every((item) => !("id" in item))).toBe(true);
  });

  it("a storing upstream gets the reasoning with its encrypted content when the full context is resent", async () => {
    const marker = `rs-stored-${testId()}`;
    const session = uniqueSession("rs-stored");
    const ws = await connect({ session });
    const root = await wsTurn(ws, 0, {
      model: "sim-stored",
      input: `${marker} think [sim:reasoning=1] [sim:tokens=5]`,
    });
    // The adapter forgets the upstream's ids: the next turn goes as the full context.
    await evictDurableObject(sessionStub("tenant-a", session));
    await wsTurn(ws, 1, {
      model: "sim-stored",
      previous_response_id: responseOf(root).id,
      input: `${marker} again`,
    });
    const resent = (await recorded(marker)).at(-1)!;
    expect(resent.previousResponseId).toBeNull();
    expect(resent.body.input.map((item) => item.type)).toEqual([
      "message",
      "reasoning",
      "message",
      "message",
    ]);
    expect(resent.body.input[1]).toMatchObject({
      id: reasoningOf(root).reasoning.id,
      encrypted_content: expect.stringMatching(/^gAAAAA/),
    });
    ws.close();
  });
});

describe("models that do not reason", () => {
  it("refuse the include: Deltagate resends without it once, then stops asking; a client's own include is refused", async () => {
    const client = sdkClient();
    const model = `gpt-4o-${testId()}`;
    const marker = `rs-noreason-${testId()}`;
    const one = await client.responses.create({ model, input: `${marker} one` });
    const two = await client.responses.create({ model, input: `${marker} two` });
    expect([one.status, two.status]).toEqual(["completed", "completed"]);
    const requests = await recorded(marker);
    expect(requests.map((r) => [r.status, r.body.include ?? null])).toEqual([
      [400, [ENCRYPTED]],
      [200, null],
      [200, null],
    ]);
    await expect(
      client.responses.create({ model, include: [ENCRYPTED], input: `${marker} three` }),
    ).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining("Encrypted content is not supported"),
    });
  });

  it("refuse it over Responses WebSocket mode too, recovered on the same turn", async () => {
    const marker = `rs-noreason-ws-${testId()}`;
    const ws = await connect({ session: uniqueSession("rs-noreason-ws") });
    await wsTurn(ws, 0, { model: `sim-ws-gpt-4o-${testId()}`, input: `${marker} one` });
    const frames = await recorded(marker);
    expect(frames.map((r) => [r.status, r.body.include ?? null])).toEqual([
      [400, [ENCRYPTED]],
      [200, null],
    ]);
    ws.close();
  });
});
