/**
 * Every kind of answer Deltagate sends, checked against the `openai` package's TypeScript types by
 * the TypeScript compiler (test/support/openai-shapes.ts): Response objects (created, retrieved,
 * cancelled, a `generate: false` warm-up's), one sample of each streamed event type (SSE and
 * WebSocket), `input_items` (with a `function_call_output` sent without `status`), errors (HTTP
 * envelopes and a WebSocket `error` event), a deletion, and conversations (the object, its items,
 * one item, a deletion) — captured from `npm start`'s stack
 * (simulator + `wrangler dev`). A mismatch fails with the sample's name and the compiler's message.
 * The first test shows the check fails on a mismatch, without the stack.
 */
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { LOCAL_DEV_KEY } from "../../scripts/local-stack.ts";
import { useSharedStack } from "../support/e2e-stack.ts";
import { type ShapeSample, shapeErrors } from "../support/openai-shapes.ts";
import { SseReader } from "../support/sse-reader.ts";
import { testId } from "../support/test-id.ts";

const e2e = useSharedStack();
const MODEL = "deltagate-sim";
const HEADERS = { authorization: `Bearer ${LOCAL_DEV_KEY}`, "content-type": "application/json" };
const TOOL = {
  type: "function",
  name: "exec_command",
  strict: false,
  parameters: { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] },
};

type Json = Record<string, unknown>;

async function post(path: string, body: unknown): Promise<globalThis.Response> {
  return fetch(`${e2e.proxy.url}${path}`, { method: "POST", headers: HEADERS, body: JSON.stringify(body) });
}

async function call(method: string, path: string): Promise<Json> {
  return (await (await fetch(`${e2e.proxy.url}${path}`, { method, headers: HEADERS })).json()) as Json;
}

/** The events of one streamed create. */
async function streamed(body: Json): Promise<Json[]> {
  const response = await post("/v1/responses", { ...body, stream: true });
  expect(response.status).toBe(200);
  const events = await new SseReader(response.body as ReadableStream<Uint8Array>).rest();
  return events.map((event) => event.data);
}

/** One sample per event type (its first occurrence). */
function perType(events: readonly Json[], type: "ResponseStreamEvent" | "ResponsesServerEvent", via: string) {
  const seen = new Map<string, ShapeSample>();
  for (const event of events) {
    const name = `${via} ${String(event.type)}`;
    if (!seen.has(name)) seen.set(name, { name, type, value: event });
  }
  return [...seen.values()];
}

/** The frames a WebSocket turn (or refusal) sends, up to its terminal event or `error`. */
async function wsFrames(frames: readonly Json[]): Promise<Json[]> {
  const url = `${e2e.proxy.url.replace(/^http/, "ws")}/v1/responses`;
  const socket = new WebSocket(url, { headers: { authorization: HEADERS.authorization } });
  await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
  const received: Json[] = [];
  const ends = new Set(["response.completed", "response.failed", "response.incomplete", "error"]);
  let pending = frames.length;
  const done = new Promise<void>((resolve) => {
    socket.on("message", (data) => {
      const event = JSON.parse(String(data)) as Json;
      received.push(event);
      if (ends.has(String(event.type)) && --pending === 0) resolve();
    });
  });
  for (const frame of frames) socket.send(JSON.stringify(frame));
  await done;
  socket.close();
  return received;
}

describe("the shape check", () => {
  it("fails on a mismatch: a cancelled response's old error, an input item without status, a usage without cache_write_tokens", () => {
    const response = {
      id: "resp_1",
      object: "response",
      access_programs: null,
      created_at: 1,
      error: { code: "response_cancelled", message: "The response was cancelled." },
      incomplete_details: null,
      instructions: null,
      metadata: {},
      model: "m",
      output: [],
      parallel_tool_calls: true,
      temperature: 1,
      tool_choice: "auto",
      tools: [],
      top_p: 1,
      status: "cancelled",
      usage: {
        input_tokens: 0,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 0,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 0,
      },
    };
    const list = {
      object: "list",
      data: [{ type: "function_call_output", id: "fco_1", call_id: "call_1", output: "ok" }],
      first_id: "fco_1",
      last_id: "fco_1",
      has_more: false,
    };
    const errors = shapeErrors([
      { name: "cancelled", type: "Response", value: response },
      { name: "listed", type: "ResponseItemList", value: list },
    ]);
    expect(errors.join("\n")).toMatch(/cancelled \(Response\).*response_cancelled/s);
    expect(errors.join("\n")).toMatch(/cancelled \(Response\).*cache_write_tokens/s);
    expect(errors.join("\n")).toMatch(/listed \(ResponseItemList\)/);
    const fixed = {
      ...response,
      error: null,
      usage: { ...response.usage, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 } },
    };
    const listed = { ...list, data: [{ ...list.data[0], status: "completed" }] };
    expect(
      shapeErrors([
        { name: "cancelled", type: "Response", value: fixed },
        { name: "listed", type: "ResponseItemList", value: listed },
      ]),
    ).toEqual([]);
  });
});

describe("Deltagate's answers against the openai package's types", () => {
  it("Response objects, streamed events, input_items, errors and deletions are instances of OpenAI's types", async () => {
    const samples: ShapeSample[] = [];
    const marker = testId();

    // A non-streamed create, retrieved, then deleted.
    const plain = await post("/v1/responses", { model: MODEL, input: `${marker} hi [sim:tokens=5]` });
    expect(plain.status).toBe(200);
    const created = (await plain.json()) as Json;
    samples.push({ name: "POST /v1/responses", type: "Response", value: created });

    // A streamed tool loop: function call events, then, answering with an output sent without
    // `status`, message events.
    const toolTurn = await streamed({
      model: MODEL,
      input: `${marker} run \`ls\` [sim:tools=1]`,
      tools: [TOOL],
    });
    const toolResponse = toolTurn.at(-1)?.response as { id: string; output: Json[] };
    const toolCall = toolResponse.output.find((item) => item.type === "function_call") as { call_id: string };
    const answer = await streamed({
      model: MODEL,
      previous_response_id: toolResponse.id,
      input: [{ type: "function_call_output", call_id: toolCall.call_id, output: "file.txt" }],
      tools: [TOOL],
    });
    samples.push(...perType([...toolTurn, ...answer], "ResponseStreamEvent", "SSE"));
    const answerId = (answer.at(-1)?.response as { id: string } | undefined)?.id;
    samples.push({
      name: "GET /v1/responses/{id}",
      type: "Response",
      value: await call("GET", `/v1/responses/${answerId}`),
    });
    const items = await call("GET", `/v1/responses/${answerId}/input_items`);
    expect(JSON.stringify(items)).toContain("function_call_output");
    samples.push({ name: "GET /v1/responses/{id}/input_items", type: "ResponseItemList", value: items });

    // A cancelled response: its stream ends with response.failed (status cancelled), and the
    // cancel answers the Response.
    const hold = `shapes-${marker}`;
    const running = await post("/v1/responses", {
      model: MODEL,
      input: `${marker} wait [sim:tokens=5] [sim:hold=${hold}]`,
      stream: true,
    });
    const reader = new SseReader(running.body as ReadableStream<Uint8Array>);
    const first = await reader.until((event) => event.type === "response.output_text.done");
    expect(first).not.toBeNull();
    const runningId = (reader.events[0]?.data.response as { id: string } | undefined)?.id;
    const cancelled = (await (await post(`/v1/responses/${runningId}/cancel`, {})).json()) as Json;
    expect(cancelled).toMatchObject({ status: "cancelled", error: null });
    samples.push({ name: "POST /v1/responses/{id}/cancel", type: "Response", value: cancelled });
    const ended = (await reader.rest()).map((event) => event.data);
    samples.push({
      name: "SSE of a cancelled response: terminal",
      type: "ResponseStreamEvent",
      value: ended.at(-1),
    });
    await fetch(`${e2e.stack.simulatorUrl}/_sim/release?hold=${hold}`, { method: "POST" });

    // WebSocket: a warm-up (its zero usage), a turn, and a refused frame (`error` event).
    const frames = await wsFrames([
      { type: "response.create", model: MODEL, input: [], generate: false },
      { type: "response.create", model: MODEL, input: `${marker} hello [sim:tokens=5]` },
      { type: "response.create", model: MODEL, input: "x", tempreature: 1 },
    ]);
    const warmUp = frames.find((frame) => frame.type === "response.completed");
    expect((warmUp?.response as { output: unknown[] } | undefined)?.output).toEqual([]);
    samples.push({
      name: "WebSocket generate:false response.completed",
      type: "ResponsesServerEvent",
      value: warmUp,
    });
    samples.push(...perType(frames, "ResponsesServerEvent", "WebSocket"));

    // Errors and a deletion.
    const unknown = await post("/v1/responses", { model: MODEL, input: "x", tempreature: 1 });
    expect(unknown.status).toBe(400);
    samples.push({ name: "400 unknown_parameter", type: "ErrorEnvelope", value: await unknown.json() });
    samples.push({
      name: "404",
      type: "ErrorEnvelope",
      value: await call("GET", "/v1/responses/resp_unknown"),
    });
    samples.push({
      name: "DELETE /v1/responses/{id}",
      type: "ResponseDeleted",
      value: await call("DELETE", `/v1/responses/${created.id}`),
    });

    // Conversations: the object, its items (a user message, then a turn's input and output), one
    // item, a deletion.
    const conversation = (await (
      await post("/v1/conversations", {
        items: [{ type: "message", role: "user", content: "hello" }],
        metadata: { topic: "shapes" },
      })
    ).json()) as Json;
    samples.push({ name: "POST /v1/conversations", type: "Conversation", value: conversation });
    const turn = await post("/v1/responses", {
      model: MODEL,
      conversation: conversation.id,
      input: `${marker} and again [sim:tokens=4]`,
    });
    expect(turn.status).toBe(200);
    samples.push({
      name: "POST /v1/responses with conversation",
      type: "Response",
      value: await turn.json(),
    });
    const conversationItems = await call("GET", `/v1/conversations/${conversation.id}/items?order=asc`);
    expect((conversationItems.data as Json[]).length).toBeGreaterThanOrEqual(3);
    samples.push({
      name: "GET /v1/conversations/{id}/items",
      type: "ConversationItemList",
      value: conversationItems,
    });
    const firstItem = (conversationItems.data as Json[])[0]!;
    samples.push({
      name: "GET /v1/conversations/{id}/items/{item_id}",
      type: "ConversationItem",
      value: await call("GET", `/v1/conversations/${conversation.id}/items/${firstItem.id}`),
    });
    samples.push({
      name: "DELETE /v1/conversations/{id}",
      type: "ConversationDeleted",
      value: await call("DELETE", `/v1/conversations/${conversation.id}`),
    });

    const types = new Set(samples.map((sample) => sample.name));
    for (const expected of [
      "SSE response.created",
      "SSE response.function_call_arguments.delta",
      "SSE response.output_text.delta",
      "SSE response.content_part.done",
      "WebSocket error",
    ]) {
      expect(types).toContain(expected);
    }
    expect(shapeErrors(samples)).toEqual([]);
  }, 120_000);
});
