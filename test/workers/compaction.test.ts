/**
 * Compaction (issue #17 item 3; src/compaction/): `POST /v1/responses/compact` through the real
 * `openai` SDK, `compaction_trigger` over HTTP and WebSocket, a compacted chain continued on
 * another transport, on a Responses upstream that compacts itself (pass-through, `sim-cmp-up*`
 * routes) and on upstreams Deltagate compacts for (the default Responses route, Chat Completions),
 * and the refusal of forged or foreign compaction items.
 */
import { afterEach, describe, expect, inject, it, vi } from "vitest";
import { MARKER as SAFETY_MARKER } from "../support/safety.ts";
import { sdkClient } from "../support/sdk-client.ts";
import { testId } from "../support/test-id.ts";
import {
  connect,
  KEY_A,
  KEY_B,
  simulatorRequests,
  uniqueSession,
  workerFetch,
} from "../support/ws-client.ts";

type Item = Record<string, unknown> & { type: string };

function userMessage(text: string): Item {
  return { type: "message", role: "user", content: text };
}

async function post(path: string, body: unknown, key = KEY_A): Promise<Response> {
  return workerFetch(path, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** The simulator's recorded requests whose body contains `marker` (newest last). */
function recorded(marker: string) {
  return simulatorRequests(inject("simulatorUrl"), marker);
}

/** The JSON body of a recorded request (fails the test when there is none). */
function bodyOf<T>(request: Record<string, unknown> | undefined): T {
  expect(request).toBeDefined();
  return request!.body as T;
}

function lastItem(output: unknown): Item {
  const items = output as Item[];
  return items[items.length - 1]!;
}

describe("POST /v1/responses/compact", () => {
  it("Deltagate compacts for a Responses upstream that does not: user messages, then one sealed compaction item", async () => {
    const marker = `cmp-own-${testId()}`;
    const client = sdkClient();
    const compacted = await client.responses.compact({
      model: "deltagate-sim",
      input: [
        { role: "user", content: `Remember the code word: slate. ${marker}` },
        { role: "assistant", content: "OK." },
        { role: "user", content: "Compress this conversation." },
      ],
    });
    expect(compacted.object).toBe("response.compaction");
    expect(compacted.output.map((item) => item.type)).toEqual(["message", "message", "compaction"]);
    const compaction = lastItem(compacted.output);
    expect(String(compaction.encrypted_content)).toMatch(/^dgc1\./);
    expect(String(compaction.encrypted_content)).not.toContain("slate"); // sealed, not readable
    expect(compacted.output[0]).toMatchObject({ role: "user", status: "completed" });
    expect(compacted.usage.total_tokens).toBeGreaterThan(0);
    // The summary was asked of the route's model with Deltagate's prompt, as a plain turn.
    const [summaryRequest] = await recorded(marker);
    expect(summaryRequest?.path).toBe("/v1/responses");
    expect(String(summaryRequest?.body && JSON.stringify(summaryRequest.body))).toContain(
      "You are compacting",
    );
  });

  it("runs its summarization through the safety checks: a flagged input is refused, nothing sealed", async () => {
    const res = await post("/v1/responses/compact", {
      model: "deltagate-sim",
      input: [userMessage(`Please keep ${SAFETY_MARKER} in mind.`)],
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("moderation_blocked");
  });

  it("answers 400 without `model`", async () => {
    const res = await post("/v1/responses/compact", { input: [userMessage("Compact this conversation.")] });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { param: string; message: string } };
    expect(body.error.param).toBe("model");
    expect(body.error.message).toContain("model");
  });

  it("passes through to an upstream that compacts (its own compaction item comes back as is)", async () => {
    const marker = `cmp-up-${testId()}`;
    const client = sdkClient();
    const compacted = await client.responses.compact({
      model: "sim-cmp-up",
      input: [{ role: "user", content: `We launch on Tuesday. ${marker}` }],
    });
    expect(compacted.object).toBe("response.compaction");
    expect(String(lastItem(compacted.output).encrypted_content)).toMatch(/^simc1\./);
    const requests = await recorded(marker);
    expect(requests.map((r) => r.path)).toEqual(["/v1/responses/compact"]);
  });

  it("compacts the chain of previous_response_id", async () => {
    const client = sdkClient();
    const first = await client.responses.create({
      model: "deltagate-sim",
      input: "The plan is Tuesday. [sim:tokens=5]",
    });
    const compacted = await client.responses.compact({
      model: "deltagate-sim",
      previous_response_id: first.id,
    });
    expect(compacted.output.map((item) => item.type)).toEqual(["message", "compaction"]);
  });
});

describe("a compacted chain continues", () => {
  for (const model of ["sim-chat", "deltagate-sim", "sim-cmp-up"]) {
    it(`over HTTP and WebSocket (${model})`, async () => {
      const marker = `cmp-cont-${model}-${testId()}`;
      const compact = await post("/v1/responses/compact", {
        model,
        input: [userMessage(`Remember the code word: slate. ${marker}`), userMessage("Compress this.")],
      });
      expect(compact.status).toBe(200);
      const { output } = (await compact.json()) as { output: Item[] };

      // HTTP: the compacted window, then a new user message; no previous_response_id.
      const client = sdkClient();
      const http = await client.responses.create({
        model,
        input: [
          ...(output as never[]),
          { role: "user", content: `Continue over HTTP [sim:tokens=4] ${marker}-h` },
        ],
      });
      expect(http.status).toBe("completed");

      // WebSocket: the same window starts a new chain, then the chain goes on with a delta.
      const ws = await connect({ session: uniqueSession("cmp") });
      ws.send({
        type: "response.create",
        model,
        store: false,
        tools: [],
        input: [
          ...output,
          { type: "message", role: "user", content: `Continue over WS [sim:tokens=4] ${marker}-w` },
        ],
      });
      const [, ...turn] = await ws.turn(0);
      const done = turn[turn.length - 1]!;
      expect(done.type).toBe("response.completed");
      const id = (done.response as { id: string }).id;
      ws.send({
        type: "response.create",
        model,
        store: false,
        previous_response_id: id,
        input: [{ type: "message", role: "user", content: `And once more [sim:tokens=4] ${marker}-w2` }],
      });
      const next = await ws.turn(1);
      expect(next[next.length - 1]!.type).toBe("response.completed");
      ws.close();

      // What the upstream got in place of the compaction item.
      for (const suffix of ["-h", "-w", "-w2"]) {
        const [sent] = await recorded(`${marker}${suffix}`);
        const body = JSON.stringify(sent?.body);
        if (model === "sim-cmp-up") {
          expect(body).toContain("simc1."); // its own item, as is
        } else {
          expect(body).not.toContain("dgc1."); // Deltagate's item never goes upstream…
          expect(body).toContain("Summary of the earlier part of this conversation"); // …its summary does
        }
      }
    });
  }
});

describe("compaction_trigger", () => {
  it("HTTP, Deltagate compacts: exactly one compaction output item; the trigger is neither stored nor echoed", async () => {
    const marker = `trig-own-${testId()}`;
    const client = sdkClient();
    const first = await client.responses.create({
      model: "deltagate-sim",
      input: `Remember: ember. ${marker} [sim:tokens=5]`,
    });
    const res = await post("/v1/responses", {
      model: "deltagate-sim",
      previous_response_id: first.id,
      input: [userMessage(`Now compact. ${marker}-t`), { type: "compaction_trigger" }],
    });
    expect(res.status).toBe(200);
    const compacted = (await res.json()) as { id: string; output: Item[]; usage: unknown };
    expect(compacted.output).toHaveLength(1);
    expect(compacted.output[0]!.type).toBe("compaction");
    expect(String(compacted.output[0]!.encrypted_content)).toMatch(/^dgc1\./);
    expect(JSON.stringify(compacted)).not.toContain("compaction_trigger");
    expect(JSON.stringify(compacted)).not.toContain("deltagate_origin");
    const items = await client.responses.inputItems.list(compacted.id, { order: "asc" });
    expect(items.data.map((item) => item.type)).not.toContain("compaction_trigger");
    const retrieved = await client.responses.retrieve(compacted.id);
    expect(retrieved.output.map((item) => item.type)).toEqual(["compaction"]);
    // The upstream got a summarization request, never the trigger item.
    const [sent] = await recorded(`${marker}-t`);
    expect(JSON.stringify(sent?.body)).not.toContain("compaction_trigger");

    // The chain continues from the compaction: the context sent upstream starts at its summary.
    const next = await client.responses.create({
      model: "deltagate-sim",
      previous_response_id: compacted.id,
      input: `Go on. ${marker}-n [sim:tokens=4]`,
    });
    expect(next.status).toBe("completed");
    const [continued] = await recorded(`${marker}-n`);
    const input = bodyOf<{ input: Item[] }>(continued).input;
    expect(JSON.stringify(input[0])).toContain("Summary of the earlier part of this conversation");
    expect(JSON.stringify(input)).not.toContain(`Remember: ember. ${marker}`); // before the compaction
  });

  it("WebSocket, Chat Completions upstream: one compaction item, the chain goes on", async () => {
    const marker = `trig-chat-${testId()}`;
    const ws = await connect({ session: uniqueSession("trig") });
    ws.send({
      type: "response.create",
      model: "sim-chat",
      input: `Code word: ember. ${marker} [sim:tokens=5]`,
    });
    const first = await ws.turn(0);
    const firstId = (first[first.length - 1]!.response as { id: string }).id;
    ws.send({
      type: "response.create",
      model: "sim-chat",
      previous_response_id: firstId,
      input: [{ type: "compaction_trigger" }],
    });
    const compactTurn = await ws.turn(1);
    const done = compactTurn[compactTurn.length - 1]! as {
      type: string;
      response: { id: string; output: Item[] };
    };
    expect(done.type).toBe("response.completed");
    expect(done.response.output.map((item) => item.type)).toEqual(["compaction"]);
    expect(JSON.stringify(compactTurn)).not.toContain("compaction_trigger");
    const added = compactTurn.filter((f) => f.type === "response.output_item.done");
    expect(added).toHaveLength(1);
    ws.send({
      type: "response.create",
      model: "sim-chat",
      previous_response_id: done.response.id,
      input: `Continue. ${marker}-n [sim:tokens=4]`,
    });
    const next = await ws.turn(2);
    expect(next[next.length - 1]!.type).toBe("response.completed");
    ws.close();
    const [sent] = await recorded(`${marker}-n`);
    const messages = JSON.stringify(bodyOf<{ messages: unknown }>(sent).messages);
    expect(messages).toContain("Summary of the earlier part of this conversation");
    expect(messages).not.toContain(`Code word: ember. ${marker}`);
  });

  it("is passed through to an upstream that compacts (HTTP and WebSocket mode)", async () => {
    for (const model of ["sim-cmp-up", "sim-cmp-upws"]) {
      const marker = `trig-up-${model}-${testId()}`;
      const ws = await connect({ session: uniqueSession("trig-up") });
      ws.send({
        type: "response.create",
        model,
        store: false,
        input: [
          { type: "message", role: "user", content: `Compact me ${marker}` },
          { type: "compaction_trigger" },
        ],
      });
      const turn = await ws.turn(0);
      const done = turn[turn.length - 1]! as { type: string; response: { output: Item[] } };
      expect(done.type).toBe("response.completed");
      expect(done.response.output).toHaveLength(1);
      expect(String(done.response.output[0]!.encrypted_content)).toMatch(/^simc1\./);
      ws.close();
      const [sent] = await recorded(marker);
      const input = bodyOf<{ input: Item[] }>(sent).input;
      expect(input[input.length - 1]).toEqual({ type: "compaction_trigger" });
    }
  });

  it("must be the last input item", async () => {
    const res = await post("/v1/responses", {
      model: "deltagate-sim",
      input: [{ type: "compaction_trigger" }, userMessage("after it")],
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { param: string } }).error.param).toBe("input[0]");
  });
});

describe("forged compaction items", () => {
  async function sealed(): Promise<Item> {
    const res = await post("/v1/responses/compact", {
      model: "sim-chat",
      input: [userMessage("Seal this.")],
    });
    return lastItem(((await res.json()) as { output: Item[] }).output);
  }

  it("a changed byte is refused with 400 over HTTP and WebSocket, nothing is sent upstream", async () => {
    const item = await sealed();
    const content = String(item.encrypted_content);
    const flipped = content.slice(0, -2) + (content.at(-2) === "A" ? "B" : "A") + content.at(-1);
    const marker = `forged-${testId()}`;
    const forged = { ...item, encrypted_content: flipped };
    const res = await post("/v1/responses", { model: "sim-chat", input: [forged, userMessage(marker)] });
    expect(res.status).toBe(400);
    const error = ((await res.json()) as { error: { code: string; param: string } }).error;
    expect(error).toMatchObject({ code: "invalid_encrypted_content", param: "input[0]" });

    const ws = await connect({ session: uniqueSession("forged") });
    ws.send({ type: "response.create", model: "deltagate-sim", input: [forged, userMessage(marker)] });
    const [frame] = await ws.turn(0);
    expect(frame).toMatchObject({ type: "error", status: 400, error: { code: "invalid_encrypted_content" } });
    ws.close();
    expect(await recorded(marker)).toHaveLength(0);
  });

  afterEach(() => vi.restoreAllMocks());

  it("a malformed token (a body whose length is 1 mod 4) is 400 on every route that reads one, with no error log line", async () => {
    const errors: string[] = [];
    vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => {
      errors.push(args.map(String).join(" "));
    });
    const item = await sealed();
    const content = String(item.encrypted_content);
    const head = content.slice(0, content.lastIndexOf(".") + 1); // `dgc1.<kid>.`: a key of this deployment
    const body = content.slice(head.length);
    const malformed = {
      ...item,
      encrypted_content: head + body.slice(0, body.length - ((body.length - 1) % 4)),
    };
    expect((String(malformed.encrypted_content).length - head.length) % 4).toBe(1);
    const marker = `malformed-${testId()}`;
    const input = [malformed, userMessage(marker)];
    for (const path of ["/v1/responses", "/v1/responses/compact", "/v1/responses/input_tokens"]) {
      const res = await post(path, { model: "sim-chat", input });
      expect(res.status, path).toBe(400);
      const error = ((await res.json()) as { error: { code: string; param: string } }).error;
      expect(error, path).toMatchObject({ code: "invalid_encrypted_content", param: "input[0]" });
    }
    const ws = await connect({ session: uniqueSession("malformed") });
    ws.send({ type: "response.create", model: "deltagate-sim", input });
    const [frame] = await ws.turn(0);
    expect(frame).toMatchObject({ type: "error", status: 400, error: { code: "invalid_encrypted_content" } });
    // The socket stays open: the next turn completes.
    ws.send({ type: "response.create", model: "deltagate-sim", input: [userMessage("after it")] });
    expect((await ws.turn(1)).at(-1)).toMatchObject({ type: "response.completed" });
    ws.close();
    expect(await recorded(marker)).toHaveLength(0);
    expect(errors).toEqual([]);
  });

  it("another tenant's item, and an item of another issuer on a route Deltagate compacts for, are refused", async () => {
    const item = await sealed();
    const other = await post("/v1/responses", { model: "sim-chat", input: [item, userMessage("hi")] }, KEY_B);
    expect(other.status).toBe(400);
    const foreign = { type: "compaction", encrypted_content: "gAAAAABforeign-provider-token" };
    const res = await post("/v1/responses", { model: "sim-chat", input: [foreign, userMessage("hi")] });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_encrypted_content");
  });
});

describe("context_management", () => {
  it("Deltagate compacts a context over compact_threshold: the output starts with the compaction item", async () => {
    const marker = `cm-${testId()}`;
    const client = sdkClient();
    const first = await client.responses.create({
      model: "deltagate-sim",
      input: `${"long history ".repeat(50)} ${marker} [sim:tokens=5]`,
    });
    const res = await post("/v1/responses", {
      model: "deltagate-sim",
      previous_response_id: first.id,
      input: `Next question ${marker}-q [sim:tokens=4]`,
      context_management: [{ type: "compaction", compact_threshold: 50 }],
    });
    expect(res.status).toBe(200);
    const response = (await res.json()) as { output: Item[]; context_management?: unknown };
    expect(response.output.map((item) => item.type)).toEqual(["compaction", "message"]);
    expect(response.context_management).toBeUndefined();
    // The model answered from the summary and the turn's input only.
    const [answered] = await recorded(`${marker}-q`);
    const input = bodyOf<{ input: Item[] }>(answered).input;
    expect(input).toHaveLength(2);
    expect(JSON.stringify(input[0])).toContain("Summary of the earlier part of this conversation");
    expect(JSON.stringify(input)).not.toContain("long history");

    // The next turn starts at the compaction and does not compact again: the previous response's
    // usage measures the context before the compaction, not what is sent now.
    const next = await post("/v1/responses", {
      model: "deltagate-sim",
      previous_response_id: (response as unknown as { id: string }).id,
      input: `And then ${marker}-n [sim:tokens=4]`,
      context_management: [{ type: "compaction", compact_threshold: 2000 }],
    });
    expect(((await next.json()) as { output: Item[] }).output.map((item) => item.type)).toEqual(["message"]);
    const [continued] = await recorded(`${marker}-n`);
    const sent = bodyOf<{ input: Item[] }>(continued).input;
    expect(sent).toHaveLength(3); // the summary, the answer, the new input
    expect(JSON.stringify(sent)).not.toContain("long history");
  });

  it("is passed through to an upstream that compacts", async () => {
    const marker = `cm-up-${testId()}`;
    const res = await post("/v1/responses", {
      model: "sim-cmp-up",
      input: `hello ${marker} [sim:tokens=4]`,
      context_management: [{ type: "compaction", compact_threshold: 1000 }],
    });
    expect(res.status).toBe(200);
    const [sent] = await recorded(marker);
    expect(bodyOf<{ context_management: unknown }>(sent).context_management).toEqual([
      { type: "compaction", compact_threshold: 1000 },
    ]);
  });
});
