/**
 * Input safety checks end to end (src/safety/, issue #9), with the simulator's /v1/moderations
 * as a real classifier server and its recorder counting the calls: a 30-turn tool loop classifies
 * each turn's new items in at most one call, instructions and tools once per session, nothing
 * twice (same session, a new socket, another session of the tenant); flagged input is rejected
 * before anything is stored or generated — in `parallel` mode by aborting the upstream request;
 * classifier failures fail closed (503 `safety_unavailable`) or, when configured, open; the
 * request's `moderation` parameter is reported as `response.moderation`.
 */
import { describe, expect, inject, it } from "vitest";
import { SHELL_TOOL } from "../support/fixtures.ts";
import { getResponse, moderationCalls, postResponse } from "../support/safety.ts";
import { countRows } from "../support/session-stub.ts";
import { testId } from "../support/test-id.ts";
import { connect, type Frame, KEY_B, simulatorRequests, uniqueSession } from "../support/ws-client.ts";

const simulatorUrl = () => inject("simulatorUrl");

type Call = { call_id: string; type: string };

const responseId = (frames: Frame[]) => (frames.at(-1)!.response as { id: string }).id;

function functionCalls(frames: Frame[]): Call[] {
  const response = frames.at(-1)?.response as { output?: Call[] } | undefined;
  return (response?.output ?? []).filter((item) => item.type === "function_call");
}

describe("safety: incremental input checks", () => {
  it("a 30-turn tool loop: one call per turn with only its new items; instructions and tools once", async () => {
    const nonce = `loop-${testId()}`;
    const session = uniqueSession("safety-loop");
    const ws = await connect({ session });
    const instructions = `You are agent ${nonce}.`;
    const tools = [{ ...SHELL_TOOL, description: `Runs a shell command (${nonce}).` }];
    ws.send({
      type: "response.create",
      model: "sim-safe-mod-loop",
      instructions,
      tools,
      input: `${nonce} list files with \`ls\` [sim:tools=29]`,
    });
    let frames = await ws.turn(0);
    const outputs: string[] = [];
    for (let turn = 2; turn <= 30; turn++) {
      const calls = functionCalls(frames);
      expect(calls, `turn ${turn - 1} called a tool`).toHaveLength(1);
      const output = `${nonce} output of turn ${turn}: total ${turn * 7}`;
      outputs.push(output);
      ws.send({
        type: "response.create",
        model: "sim-safe-mod-loop",
        instructions,
        tools,
        previous_response_id: responseId(frames),
        input: [{ type: "function_call_output", call_id: calls[0]!.call_id, output }],
      });
      frames = await ws.turn(turn - 1);
      expect(frames.at(-1)?.type).toBe("response.completed");
    }
    const lastId = responseId(frames);

    const calls = await moderationCalls(simulatorUrl(), nonce);
    expect(calls).toHaveLength(30);
    // Turn 1: instructions, the tool definition and the user message, in one call.
    expect(calls[0]?.input).toHaveLength(3);
    expect(calls[0]?.input[0]).toBe(instructions);
    // Every later turn: exactly its own tool output — no history, no instructions, no tools.
    expect(calls.slice(1).map((c) => c.input)).toEqual(outputs.map((o) => [o]));
    expect(calls.filter((c) => c.input.some((t) => t.includes(`agent ${nonce}`)))).toHaveLength(1);
    expect(calls.filter((c) => c.input.some((t) => t.includes("Runs a shell command")))).toHaveLength(1);

    // Content already classified costs no call: the same output again (a new socket of the session).
    ws.close();
    const again = await connect({ session });
    const before = (await moderationCalls(simulatorUrl(), nonce)).length;
    again.send({
      type: "response.create",
      model: "sim-safe-mod-loop",
      instructions,
      tools,
      previous_response_id: lastId,
      input: `${outputs[0]}`,
    });
    const repeat = await again.turn(0);
    expect(repeat.at(-1)?.type).toBe("response.completed");
    expect((await moderationCalls(simulatorUrl(), nonce)).length).toBe(before);
    again.close();
  });

  it("a chain continued from another session of the tenant re-checks nothing it already checked", async () => {
    const nonce = `import-${testId()}`;
    const first = await postResponse(
      { model: "sim-safe-mod-import", input: `${nonce} first question [sim:tokens=5]` },
      undefined,
      uniqueSession("safety-import-a"),
    );
    const created = (await first.json()) as { id: string; status: string };
    expect(created.status).toBe("completed");
    expect(await moderationCalls(simulatorUrl(), nonce)).toHaveLength(1);
    const second = await postResponse(
      {
        model: "sim-safe-mod-import",
        previous_response_id: created.id,
        input: `${nonce} follow-up from another session [sim:tokens=5]`,
      },
      undefined,
      uniqueSession("safety-import-b"),
    );
    expect(((await second.json()) as { status: string }).status).toBe("completed");
    const calls = await moderationCalls(simulatorUrl(), nonce);
    expect(calls).toHaveLength(2);
    expect(calls[1]?.input).toEqual([`${nonce} follow-up from another session [sim:tokens=5]`]);
  });
});

describe("safety: flagged input", () => {
  it("parallel: the upstream request is aborted, nothing generated reaches the client or storage", async () => {
    const nonce = `par-${testId()}`;
    const session = uniqueSession("safety-parallel");
    const ws = await connect({ session });
    ws.send({
      type: "response.create",
      model: "sim-safe-mod-parallel",
      input: `${nonce} [sim:flag] [sim:mod_delay_ms=300] [sim:tokens=3000]`,
    });
    // The turn was accepted (response.created goes out at once, docs/protocol.md "How errors are
    // reported"), so the verdict ends it: response.failed with moderation_blocked, no output.
    const frames = await ws.turn(0);
    expect(frames.map((f) => f.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.failed",
    ]);
    expect(frames[2]).toMatchObject({
      response: { status: "failed", output: [], error: { code: "moderation_blocked" } },
    });
    // The model was called at once (parallel) and aborted when the verdict came.
    await expect
      .poll(
        async () =>
          (await simulatorRequests(simulatorUrl(), nonce)).find((r) => r.transport === "http")?.aborted,
        {
          timeout: 5_000,
        },
      )
      .toBe(true);
    expect(await countRows("tenant-a", session, "items", "kind = 1")).toBe(0); // no output stored
    // The socket stays open for the next turn.
    ws.send({
      type: "response.create",
      model: "sim-safe-mod-parallel",
      input: `${nonce} fine [sim:tokens=3]`,
    });
    expect((await ws.turn(1)).at(-1)?.type).toBe("response.completed");
    ws.close();
  });

  it("blocking: the upstream is never called for flagged input, and is called after the verdict otherwise", async () => {
    const nonce = `blk-${testId()}`;
    const res = await postResponse({ model: "sim-safe-block", input: `${nonce} plan an attack` });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: { code: "moderation_blocked", type: "invalid_request_error" },
    });
    const recorded = await simulatorRequests(simulatorUrl(), nonce);
    expect(recorded.map((r) => r.transport)).toEqual(["moderations"]);

    const clean = `${nonce}-ok`;
    const ok = await postResponse({ model: "sim-safe-block", input: `${clean} hello [sim:tokens=3]` });
    expect(ok.status).toBe(200);
    const order = (await simulatorRequests(simulatorUrl(), clean)).map((r) => r.transport);
    expect(order).toEqual(["moderations", "http"]);
  });

  it("the zero-configuration default (parallel, local rules) blocks a secret and passes benign code", async () => {
    const blocked = await postResponse({
      model: "deltagate-sim",
      input: "deploy with OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx0123 please",
    });
    expect(blocked.status).toBe(400);
    expect(await blocked.json()).toMatchObject({
      error: { code: "moderation_blocked", message: expect.stringContaining("secrets/api_key") },
    });
    const benign = await postResponse({
      model: "deltagate-sim",
      input:
        "kill -9 $(pgrep node); rm -rf build/; then DROP TABLE old_sessions in the migration [sim:tokens=3]",
    });
    expect(benign.status).toBe(200);
  });

  it("a tenant override applies (tenant-b runs with safety off)", async () => {
    const res = await postResponse(
      { model: "deltagate-sim", input: "key sk-proj-abcdefghijklmnopqrstuvwx0123 [sim:tokens=3]" },
      KEY_B,
    );
    expect(res.status).toBe(200);
  });
});

describe("safety: classifier failures", () => {
  const cases: Array<[string, string]> = [
    ["down (HTTP 500)", "[sim:mod_fail=status:500]"],
    ["slow past its timeout", "[sim:mod_delay_ms=2000]"],
    ["answering nonsense", "[sim:mod_reply=not_json]"],
    ["answering too few results", "[sim:mod_reply=no_results]"],
  ];
  for (const [what, directive] of cases) {
    it(`fails closed with safety_unavailable when the classifier is ${what}`, async () => {
      const nonce = `fail-${testId()}`;
      const session = uniqueSession("safety-fail");
      const ws = await connect({ session });
      ws.send({
        type: "response.create",
        model: "sim-safe-fail",
        input: `${nonce} hi ${directive} [sim:tokens=500]`,
      });
      // Accepted first (response.created at once), so the fail-closed error ends the response.
      const frames = await ws.turn(0);
      expect(frames.map((f) => f.type)).toEqual([
        "response.created",
        "response.in_progress",
        "response.failed",
      ]);
      expect(frames[2]).toMatchObject({
        response: { status: "failed", output: [], error: { code: "safety_unavailable" } },
      });
      expect(await countRows("tenant-a", session, "items", "kind = 1")).toBe(0);
      // The upstream request (started in parallel) was aborted.
      await expect
        .poll(
          async () =>
            (await simulatorRequests(simulatorUrl(), nonce)).find((r) => r.transport === "http")?.aborted,
        )
        .toBe(true);
      ws.close();
    });
  }

  it("fails open when configured: the turn completes and response.moderation reports the error", async () => {
    const nonce = `open-${testId()}`;
    const res = await postResponse({
      model: "sim-safe-open",
      input: `${nonce} hi [sim:mod_delay_ms=2000] [sim:tokens=3]`,
      moderation: { model: "omni-moderation-latest" },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { id: string; status: string; moderation: { input: unknown } };
    expect(body.status).toBe("completed");
    expect(body.moderation.input).toEqual({
      type: "error",
      code: "safety_unavailable",
      message: expect.stringContaining("300 ms"),
    });
    expect((await getResponse(body.id)).moderation).toEqual(body.moderation);
  });
});

describe("safety: the request's moderation parameter", () => {
  it("reports input and output results in OpenAI's shape, stored with the response", async () => {
    const nonce = `param-${testId()}`;
    const res = await postResponse({
      model: "sim-safe-mod-param",
      input: `${nonce} hello [sim:tokens=4]`,
      moderation: { model: "omni-moderation-latest", policy: { input: { mode: "score" } } },
    });
    const body = (await res.json()) as { id: string; moderation: Record<string, Record<string, unknown>> };
    expect(body.moderation.input).toMatchObject({
      type: "moderation_result",
      model: "omni-moderation-latest",
      flagged: false,
      categories: { violence: false },
      category_scores: { violence: expect.any(Number) },
      category_applied_input_types: { violence: ["text"] },
    });
    expect(body.moderation.output).toMatchObject({
      type: "moderation_result",
      model: "deltagate-rules",
      flagged: false,
    });
    expect((await getResponse(body.id)).moderation).toEqual(body.moderation);
    // Never forwarded upstream: Deltagate runs it.
    const upstream = (await simulatorRequests(simulatorUrl(), nonce)).find((r) => r.transport === "http");
    expect(upstream).toBeDefined();
    expect((upstream!.body as Record<string, unknown>).moderation).toBeUndefined();
  });

  it("responses of requests without it carry no moderation field", async () => {
    const res = await postResponse({ model: "deltagate-sim", input: "plain [sim:tokens=2]" });
    expect("moderation" in ((await res.json()) as object)).toBe(false);
  });

  it("report_events: a deltagate.safety event with the turn's accounting precedes the terminal event", async () => {
    const ws = await connect({ session: uniqueSession("safety-report") });
    ws.send({ type: "response.create", model: "sim-safe-report", input: "hello [sim:tokens=5]" });
    const frames = await ws.turn(0);
    const report = frames.at(-2);
    expect(report).toMatchObject({
      type: "deltagate.safety",
      outcome: "allowed",
      input: { calls: 1, batchSize: 1, cacheHits: 0 },
      output: { windows: expect.any(Number) },
      critical_path_ms: expect.any(Number),
    });
    expect(frames.map((f) => f.sequence_number)).toEqual(frames.map((_, i) => i));
    ws.close();
  });
});
