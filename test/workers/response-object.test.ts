/**
 * Every Response object Deltagate sends carries every field the `openai` SDK's `Response` type
 * requires and every field the Open Responses `ResponseResource` requires
 * (test/support/sdk-response-fields.ts): HTTP create and retrieve, the streamed
 * `response.created` / `in_progress` / terminal events over SSE and WebSocket, a `generate:false`
 * warm-up, a cancelled response, and a response retrieved after its turn failed. The sampling
 * penalties a request sets are forwarded upstream and echoed (0 when unset); function tools are
 * echoed with `strict` (null when the request left it out), and forwarded as sent.
 */
import { describe, expect, inject, it } from "vitest";
import { expectSdkResponse } from "../support/sdk-response-fields.ts";
import { testId } from "../support/test-id.ts";
import { connect, KEY_A, simulatorRequests, uniqueSession, workerFetch } from "../support/ws-client.ts";

const MODEL = "deltagate-sim";
const auth = { authorization: `Bearer ${KEY_A}` };

const post = (body: unknown) =>
  workerFetch("/v1/responses", {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

/** The `response` of every SSE event that has one. */
async function sseResponses(res: Response): Promise<Array<{ type: string; response: unknown }>> {
  const text = await res.text();
  return text
    .split("\n\n")
    .map((block) => block.split("\n").find((line) => line.startsWith("data: ")))
    .filter((line): line is string => line !== undefined)
    .map((line) => JSON.parse(line.slice(6)) as { type: string; response?: unknown })
    .filter((event): event is { type: string; response: unknown } => event.response !== undefined);
}

describe("Response objects match the openai SDK's required fields", () => {
  it("over HTTP: create, retrieve, stream, resume and cancel", async () => {
    const created = (await (await post({ model: MODEL, input: "hi" })).json()) as { id: string };
    expectSdkResponse(created, "POST /v1/responses");
    const retrieved = await (await workerFetch(`/v1/responses/${created.id}`, { headers: auth })).json();
    expectSdkResponse(retrieved, "GET /v1/responses/{id}");

    const streamed = await sseResponses(await post({ model: MODEL, input: "hi", stream: true }));
    expect(streamed.map((e) => e.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.completed",
    ]);
    for (const event of streamed) expectSdkResponse(event.response, `SSE ${event.type}`);
    const id = (streamed[0]!.response as { id: string }).id;
    const replayed = await sseResponses(
      await workerFetch(`/v1/responses/${id}?stream=true&starting_after=-1`, { headers: auth }),
    );
    for (const event of replayed) expectSdkResponse(event.response, `replayed ${event.type}`);

    const long = await post({ model: MODEL, input: "long [sim:tokens=5000]", stream: true });
    const reader = long.body!.pipeThrough(new TextDecoderStream()).getReader();
    let head = "";
    while (!head.includes("\n\n")) head += (await reader.read()).value ?? "";
    const data = head.split("\n").find((line) => line.startsWith("data: "))!;
    const longId = (JSON.parse(data.slice(6)) as { response: { id: string } }).response.id;
    const cancelled = await (
      await workerFetch(`/v1/responses/${longId}/cancel`, { method: "POST", headers: auth })
    ).json();
    expectSdkResponse(cancelled, "POST /v1/responses/{id}/cancel");
    await reader.cancel();
  });

  it("over WebSocket: a turn, a warm-up and a failed turn", async () => {
    const ws = await connect({ session: uniqueSession("sdk-fields") });
    ws.send({ type: "response.create", model: MODEL, input: "hi" });
    ws.send({ type: "response.create", model: MODEL, input: [], generate: false });
    ws.send({ type: "response.create", model: MODEL, input: "x [sim:fail=midstream] [sim:tokens=80]" });
    const turns = [await ws.turn(0), await ws.turn(1), await ws.turn(2)];
    expect(turns[2]!.at(-1)?.type).toBe("response.failed");
    for (const frames of turns) {
      for (const frame of frames.filter((f) => "response" in f)) {
        expectSdkResponse(frame.response, `WebSocket ${frame.type}`);
      }
    }
    ws.close();
  });
});

describe("sampling penalties and function tools", () => {
  const tools = [
    { type: "function", name: "get_weather", parameters: { type: "object", properties: {} } },
    { type: "function", name: "exact", description: "Strict.", parameters: { type: "object" }, strict: true },
  ];

  it("forwards presence_penalty / frequency_penalty and echoes them and strict on every Response object", async () => {
    const marker = `penalties-${testId()}`;
    const body = { model: MODEL, input: marker, presence_penalty: 0.5, frequency_penalty: -0.25, tools };
    const created = (await (await post(body)).json()) as Record<string, unknown>;
    expect(created).toMatchObject({ presence_penalty: 0.5, frequency_penalty: -0.25 });
    expect(created.tools).toEqual([{ ...tools[0], description: null, strict: null }, { ...tools[1] }]);
    const retrieved = await (await workerFetch(`/v1/responses/${created.id}`, { headers: auth })).json();
    expect(retrieved).toMatchObject({
      presence_penalty: 0.5,
      frequency_penalty: -0.25,
      tools: created.tools,
    });
    const [upstream] = await simulatorRequests(inject("simulatorUrl"), marker);
    // Forwarded as sent: no strict added to the tool that had none.
    expect(upstream?.body).toMatchObject({ presence_penalty: 0.5, frequency_penalty: -0.25, tools });

    const ws = await connect({ session: uniqueSession("penalties") });
    ws.send({ type: "response.create", ...body, presence_penalty: 1 });
    for (const frame of (await ws.turn(0)).filter((f) => "response" in f)) {
      expect(frame.response, frame.type).toMatchObject({ presence_penalty: 1, frequency_penalty: -0.25 });
      expectSdkResponse(frame.response, `WebSocket ${frame.type}`);
    }
    ws.close();

    const plain = (await (await post({ model: MODEL, input: "plain" })).json()) as Record<string, unknown>;
    expect(plain).toMatchObject({ presence_penalty: 0, frequency_penalty: 0, top_logprobs: 0 });
  });

  it("refuses a penalty outside -2..2 with a 400 naming it", async () => {
    const res = await post({ model: MODEL, input: "x", frequency_penalty: 2.5 });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: { type: "invalid_request_error", param: "frequency_penalty" },
    });
  });
});
