/**
 * Hostile suite, large items (issue #10 item 6): a 5 MB tool output (`function_call_output`, with
 * multi-byte characters and surrogate pairs) completes a turn over HTTP and over WebSocket and
 * reaches the upstream byte-exact; continuing the chain after the session Durable Object was
 * evicted re-reads it from SQLite exactly; no row Deltagate writes nears production's 2 MB limit
 * (a local workerd accepts rows of several MB, so the test checks the sizes itself). Sizes are
 * counted in UTF-8 bytes: an item of 6 Mi CJK characters (18 MiB) is refused although it is only
 * 6 Mi UTF-16 units. Over the limits: 400 `item_too_large` (param `input[i]`), 413
 * `request_too_large` over HTTP and as a WebSocket `error` event (the socket stays open).
 */
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { MAX_ITEM_BYTES, MAX_REQUEST_BYTES } from "../../../src/protocol/size-limits.ts";
import { responseOwner } from "../../../src/util/ids.ts";
import { SHELL_TOOL } from "../../support/fixtures.ts";
import { testId } from "../../support/test-id.ts";
import {
  connect,
  type Frame,
  KEY_A,
  simulatorRequests,
  uniqueSession,
  workerFetch,
} from "../../support/ws-client.ts";

const MODEL_HTTP = "sim-large";
const MODEL_WS = "sim-large-ws";
const auth = { authorization: `Bearer ${KEY_A}`, "content-type": "application/json" };
/** Production Durable Object SQLite: "Maximum string, BLOB or table row size: 2 MB". */
const PRODUCTION_ROW_BYTES = 2_000_000;

/** About `bytes` of UTF-8 text mixing ASCII, 2- and 3-byte characters and surrogate pairs. */
function toolOutput(marker: string, bytes: number): string {
  const parts = [`${marker}\n`];
  let size = marker.length + 1;
  for (let line = 0; size < bytes; line++) {
    const text = `${line}: ls -la → drwxr-xr-x  café 漢字テキスト 🚀🧪 "quoted" \\ back\\slash\t tab\n`;
    parts.push(text);
    size += new TextEncoder().encode(text).byteLength;
  }
  return parts.join("");
}

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The `output` of each `function_call_output` the large simulator received with `marker`. */
async function outputsSentUpstream(marker: string): Promise<string[]> {
  const requests = await simulatorRequests(inject("largeSimulatorUrl"), marker);
  return requests.flatMap((request) => {
    const input = (request.body as { input?: Array<Record<string, unknown>> } | null)?.input ?? [];
    return input
      .filter((item) => item.type === "function_call_output")
      .map((item) => String(item.output))
      .filter((output) => output.startsWith(marker));
  });
}

async function post(body: Record<string, unknown>, session: string): Promise<Response> {
  return workerFetch("/v1/responses", {
    method: "POST",
    headers: { ...auth, "session-id": session },
    body: JSON.stringify(body),
  });
}

/** The largest value Deltagate stored in any row of the session that owns `responseId`. */
async function largestRow(responseId: string): Promise<number> {
  const stub = env.SESSIONS.get(env.SESSIONS.idFromString(responseOwner(responseId)!));
  return runInDurableObject(stub, (_instance, state) => {
    const sizes = [
      "SELECT max(length(CAST(data AS BLOB))) AS n FROM items",
      "SELECT max(length(CAST(data AS BLOB))) AS n FROM value_pieces",
      "SELECT max(length(CAST(settings AS BLOB))) AS n FROM responses",
      "SELECT max(length(CAST(data AS BLOB))) AS n FROM event_logs",
    ].map((query) => state.storage.sql.exec<{ n: number | null }>(query).one().n ?? 0);
    return Math.max(...sizes);
  });
}

async function evict(responseId: string): Promise<void> {
  await evictDurableObject(env.SESSIONS.get(env.SESSIONS.idFromString(responseOwner(responseId)!)));
}

const callOf = (response: { output: Array<Record<string, unknown>> }) =>
  response.output.find((item) => item.type === "function_call") as { call_id: string };

describe("hostile: large items", () => {
  it("over HTTP: a 5 MB tool output reaches the upstream byte-exact, also when the chain continues", async () => {
    const marker = `big-http-${testId()}`;
    const output = toolOutput(marker, 5_000_000);
    const expected = await sha256(output);
    const session = uniqueSession("large-http");
    const first = (await (
      await post({ model: MODEL_HTTP, input: "run `ls`", tools: [SHELL_TOOL] }, session)
    ).json()) as {
      id: string;
      output: Array<Record<string, unknown>>;
    };
    const answered = await post(
      {
        model: MODEL_HTTP,
        previous_response_id: first.id,
        input: [{ type: "function_call_output", call_id: callOf(first).call_id, output }],
        tools: [SHELL_TOOL],
      },
      session,
    );
    expect(
      answered.status,
      await answered
        .clone()
        .text()
        .then((t) => t.slice(0, 300)),
    ).toBe(200);
    const second = (await answered.json()) as { id: string; status: string };
    expect(second.status).toBe("completed");
    // Re-read from SQLite, not from memory: the session Durable Object is evicted first.
    await evict(second.id);
    const third = await post(
      { model: MODEL_HTTP, previous_response_id: second.id, input: "thanks" },
      session,
    );
    expect(third.status).toBe(200);
    const sent = await outputsSentUpstream(marker);
    expect(sent).toHaveLength(2); // the turn that carried it, and the continuation's full context
    for (const text of sent) expect(await sha256(text)).toBe(expected);
    // input_items serves it exactly too.
    const items = (await (
      await workerFetch(`/v1/responses/${second.id}/input_items?order=asc&limit=100`, { headers: auth })
    ).json()) as { data: Array<{ type: string; output?: string }> };
    const stored = items.data.find((item) => item.type === "function_call_output");
    expect(await sha256(String(stored?.output))).toBe(expected);
    expect(await largestRow(second.id)).toBeLessThan(PRODUCTION_ROW_BYTES);
  });

  it("over WebSocket: a 5 MB tool output reaches the upstream byte-exact, also after an eviction", async () => {
    const marker = `big-ws-${testId()}`;
    const output = toolOutput(marker, 5_000_000);
    const expected = await sha256(output);
    const session = uniqueSession("large-ws");
    let ws = await connect({ session });
    ws.send({ type: "response.create", model: MODEL_WS, input: "run `ls`", tools: [SHELL_TOOL] });
    const first = (await ws.turn(0)).at(-1) as Frame & {
      response: { id: string; output: Array<Record<string, unknown>> };
    };
    ws.send({
      type: "response.create",
      model: MODEL_WS,
      previous_response_id: first.response.id,
      input: [{ type: "function_call_output", call_id: callOf(first.response).call_id, output }],
      tools: [SHELL_TOOL],
    });
    const second = (await ws.turn(1)).at(-1) as Frame & { response: { id: string } };
    expect(second.type).toBe("response.completed");
    ws.close();
    // Once the warm upstream socket idled out (idle_ms 300), the session can be evicted: the next
    // turn re-reads the chain from SQLite and sends it whole on a new upstream socket.
    await new Promise((resolve) => setTimeout(resolve, 600));
    await evict(second.response.id);
    ws = await connect({ session });
    ws.send({
      type: "response.create",
      model: MODEL_WS,
      previous_response_id: second.response.id,
      input: "thanks",
    });
    expect((await ws.turn(0)).at(-1)?.type).toBe("response.completed");
    ws.close();
    const sent = await outputsSentUpstream(marker);
    expect(sent).toHaveLength(2); // the delta on the warm socket, then the full context on a new one
    for (const text of sent) expect(await sha256(text)).toBe(expected);
    expect(await largestRow(second.response.id)).toBeLessThan(PRODUCTION_ROW_BYTES);
  });

  it("stores settings at their limits (instructions, tools) in pieces and serves them back", async () => {
    const instructions = `${"Be terse. ".repeat(53_000)}`.slice(0, 512 * 1024);
    const tools = Array.from({ length: 150 }, (_, i) => ({
      ...SHELL_TOOL,
      name: `tool_${i}`,
      description: `${"Runs things. ".repeat(190)}`,
    }));
    const session = uniqueSession("large-settings");
    const res = await post({ model: MODEL_HTTP, input: "hi [sim:tools=0]", instructions, tools }, session);
    expect(
      res.status,
      await res
        .clone()
        .text()
        .then((t) => t.slice(0, 300)),
    ).toBe(200);
    const { id } = (await res.json()) as { id: string };
    await evict(id);
    const back = (await (await workerFetch(`/v1/responses/${id}`, { headers: auth })).json()) as {
      instructions: string;
      tools: unknown[];
    };
    expect(back.instructions).toBe(instructions);
    expect(back.tools).toHaveLength(150);
    const stub = env.SESSIONS.get(env.SESSIONS.idFromString(responseOwner(id)!));
    const pieces = await runInDurableObject(stub, (_instance, state) =>
      state.storage.sql
        .exec<{ n: number }>("SELECT COUNT(*) AS n FROM value_pieces WHERE response_id = ? AND kind = 2", id)
        .one(),
    );
    expect(pieces.n).toBeGreaterThan(1);
    expect(await largestRow(id)).toBeLessThan(PRODUCTION_ROW_BYTES);
  });

  it("counts UTF-8 bytes: 6 Mi CJK characters (18 MiB) are over the item limit", async () => {
    const output = "漢".repeat(6 * 1024 * 1024);
    expect(output.length).toBeLessThan(MAX_ITEM_BYTES);
    const res = await post(
      {
        model: MODEL_HTTP,
        input: [
          { type: "message", role: "user", content: "run" },
          { type: "function_call", call_id: "call_1", name: "exec_command", arguments: "{}" },
          { type: "function_call_output", call_id: "call_1", output },
        ],
      },
      uniqueSession("large-cjk"),
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: unknown }).error).toMatchObject({
      type: "invalid_request_error",
      code: "item_too_large",
      param: "input[2]",
    });
  });

  it("refuses an item over 16 MiB with 400 item_too_large, over HTTP and WebSocket", async () => {
    const item = { type: "message", role: "user", content: "x".repeat(MAX_ITEM_BYTES) };
    const res = await post({ model: MODEL_HTTP, input: [item] }, uniqueSession("large-item"));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: unknown }).error).toMatchObject({
      code: "item_too_large",
      param: "input[0]",
    });
    const ws = await connect({ session: uniqueSession("large-item-ws") });
    ws.send({ type: "response.create", model: MODEL_WS, input: [item] });
    expect((await ws.turn(0))[0]).toMatchObject({
      type: "error",
      status: 400,
      error: { code: "item_too_large" },
    });
    ws.send({ type: "response.create", model: MODEL_WS, input: "still open [sim:tools=0]" });
    expect((await ws.turn(1)).at(-1)?.type).toBe("response.completed");
    ws.close();
  });

  it("refuses a request over 24 MiB with 413 request_too_large; the socket stays open", async () => {
    const body = JSON.stringify({ model: MODEL_HTTP, input: "y".repeat(MAX_REQUEST_BYTES) });
    const res = await workerFetch("/v1/responses", { method: "POST", headers: auth, body });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: unknown }).error).toMatchObject({ code: "request_too_large" });
    // Chunked (no Content-Length): refused once the limit is crossed while reading.
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(body));
        controller.close();
      },
    });
    const streamed = await workerFetch("/v1/responses", { method: "POST", headers: auth, body: chunked });
    expect(streamed.status).toBe(413);
    const ws = await connect({ session: uniqueSession("large-frame") });
    ws.send(
      JSON.stringify({ type: "response.create", model: MODEL_WS, input: "y".repeat(MAX_REQUEST_BYTES) }),
    );
    expect((await ws.turn(0))[0]).toMatchObject({
      type: "error",
      status: 413,
      error: { code: "request_too_large" },
    });
    ws.send({ type: "response.create", model: MODEL_WS, input: "still open [sim:tools=0]" });
    expect((await ws.turn(1)).at(-1)?.type).toBe("response.completed");
    ws.close();
  });
});
