/**
 * Unit tests of the simulator's pure parts: directive parsing, schema-driven tool arguments,
 * the policy's tool-round logic, token estimate and answer length, the prefix cache, and the
 * Responses event sequence (validated by the openai-node accumulator).
 */
import { describe, expect, it } from "vitest";
import { answerText } from "../../simulator/answer-text.ts";
import type { SimContext } from "../../simulator/context.ts";
import { parseDirectives, stripDirectives } from "../../simulator/directives.ts";
import { buildEventSteps, midstreamCutIndex, toOutputItem } from "../../simulator/events.ts";
import { commandFromText, completedToolRounds, planTurn } from "../../simulator/policy.ts";
import { contextSegments, PrefixCache } from "../../simulator/prefix-cache.ts";
import { initialResponse, makeUsage } from "../../simulator/response-object.ts";
import { argumentsForTool } from "../../simulator/schema-args.ts";
import { estimateTokens } from "../../simulator/tokens.ts";
import { accumulateWithSdk } from "../../simulator/ws-test-client.ts";

function ctx(items: SimContext["items"], tools: SimContext["tools"] = []): SimContext {
  return { items, tools, toolChoice: undefined, parallelToolCalls: true, maxOutputTokens: null };
}

describe("simulator directives", () => {
  it("parses known directives and ignores malformed ones", () => {
    const d = parseDirectives(
      "go [sim:tools=3] [sim:parallel=2] [sim:tokens=7] [sim:fail=status:429] [sim:delay_ms=20] [sim:ws_drop=1] [sim:tokens=abc]",
    );
    expect(d).toEqual({
      toolRounds: 3,
      parallel: 2,
      answerTokens: 7,
      fail: { kind: "before", status: 429 },
      delayMs: 20,
      wsDrop: true,
      wsDropPct: 0,
      wsDropSeed: 1,
      wsMaxResponses: 0,
      splitChars: false,
      emit: null,
      deltaChars: 16,
      reasoning: false,
      hold: null,
      noUsage: false,
      retryAfterS: null,
      redacted: false,
    });
    expect(parseDirectives("[sim:retry_after=2] [sim:redacted=1]")).toMatchObject({
      retryAfterS: 2,
      redacted: true,
    });
    expect(parseDirectives("[sim:ws_drop_pct=30] [sim:ws_drop_seed=7] [sim:ws_limit=2]")).toMatchObject({
      wsDropPct: 30,
      wsDropSeed: 7,
      wsMaxResponses: 2,
    });
    expect(parseDirectives("[sim:ws_drop_pct=101]").wsDropPct).toBe(0);
    expect(parseDirectives("[sim:split_chars=1]").splitChars).toBe(true);
    expect(parseDirectives("[sim:reasoning=1]").reasoning).toBe(true);
    expect(parseDirectives("[sim:no_usage=1]").noUsage).toBe(true);
    expect(parseDirectives("[sim:hold=lane-1.a:b]").hold).toBe("lane-1.a:b");
    expect(parseDirectives("[sim:hold=a/b]").hold).toBeNull();
    expect(parseDirectives("[sim:fail=midstream]").fail).toEqual({ kind: "midstream" });
    expect(parseDirectives("[sim:fail=before]").fail).toEqual({ kind: "before", status: 500 });
    expect(parseDirectives("[sim:fail=nope] plain").fail).toBeNull();
    expect(parseDirectives("[sim:emit_hex=68c3a9] [sim:delta_chars=2]")).toMatchObject({
      emit: "hé",
      deltaChars: 2,
    });
    expect(parseDirectives("[sim:emit_hex=6] [sim:delta_chars=0]")).toMatchObject({
      emit: null,
      deltaChars: 16,
    });
    expect(stripDirectives("find [sim:tools=2]  docs ")).toBe("find docs");
  });
});

describe("simulator tool arguments", () => {
  it("fills schemas by property name and type", () => {
    const hints = { command: "make test", userText: "where is it" };
    const args = JSON.parse(
      argumentsForTool(
        {
          type: "object",
          properties: {
            command: { type: "array", items: { type: "string" } },
            path: { type: "string" },
            query: { type: "string" },
            count: { type: "integer", minimum: 3 },
            mode: { type: "string", enum: ["fast", "slow"] },
            verbose: { type: "boolean" },
            opts: { type: "object", properties: { depth: { type: "number" } }, required: ["depth"] },
          },
          required: ["command", "path", "query", "count", "mode", "verbose", "opts"],
        },
        hints,
      ),
    );
    expect(args).toEqual({
      command: ["bash", "-lc", "make test"],
      path: "README.md",
      query: "where is it",
      count: 3,
      mode: "fast",
      verbose: false,
      opts: { depth: 1 },
    });
  });

  it("fills only required properties of large schemas", () => {
    const props = Object.fromEntries(["a", "b", "c", "d", "e"].map((k) => [k, { type: "string" }]));
    const args = JSON.parse(
      argumentsForTool(
        { type: "object", properties: props, required: ["c"] },
        { command: "x", userText: "" },
      ),
    );
    expect(args).toEqual({ c: "sim" });
  });

  it("takes the shell command from single backticks only", () => {
    expect(commandFromText("please run `npm test` now")).toBe("npm test");
    expect(commandFromText("no command here")).toBe("echo deltagate-sim");
  });
});

describe("simulator policy", () => {
  const shell = {
    name: "shell",
    parameters: { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] },
  };
  const other = { name: "lookup", parameters: { type: "object", properties: {} } };
  const user = { type: "message", role: "user", content: "do it [sim:tools=2]" };

  it("prefers shell-like tools and counts rounds since the last user message", () => {
    const first = planTurn(ctx([user], [other, shell]), parseDirectives("[sim:tools=2]"));
    expect(first.items).toHaveLength(1);
    expect(first.items[0]).toMatchObject({
      type: "function_call",
      name: "shell",
      arguments: '{"cmd":"echo deltagate-sim"}',
    });
    const afterOne = [
      user,
      { type: "function_call", call_id: "c1", name: "shell", arguments: "{}" },
      { type: "function_call_output", call_id: "c1", output: "ok" },
    ];
    expect(completedToolRounds(ctx(afterOne))).toBe(1);
    expect(planTurn(ctx(afterOne, [shell]), parseDirectives("[sim:tools=2]")).items[0]?.type).toBe(
      "function_call",
    );
    const afterTwo = [
      ...afterOne,
      { type: "function_call", call_id: "c2", name: "shell", arguments: "{}" },
      { type: "function_call_output", call_id: "c2", output: "second" },
    ];
    expect(planTurn(ctx(afterTwo, [shell]), parseDirectives("[sim:tools=2]")).items).toEqual([
      { type: "message", text: "Done after 2 tool call(s). Last output: second" },
    ]);
  });

  it("answers with exactly `tokens` tokens, deterministically", () => {
    const text = answerText(42, 17);
    expect(estimateTokens(text)).toBe(17);
    expect(answerText(42, 17)).toBe(text);
    expect(answerText(43, 17)).not.toBe(text);
    expect(planTurn(ctx([user]), parseDirectives("[sim:tokens=9]")).items[0]).toMatchObject({
      type: "message",
    });
  });
});

describe("simulator prefix cache", () => {
  it("reports the tokens of the longest remembered prefix", () => {
    const cache = new PrefixCache();
    const a = { type: "message", role: "user", content: "aaaa".repeat(10) };
    const b = { type: "message", role: "user", content: "bbbb".repeat(10) };
    const c = { type: "message", role: "user", content: "cccc".repeat(10) };
    cache.remember(contextSegments([], "sys", [a, b]));
    const full = contextSegments([], "sys", [a, b, c]);
    const prefixTokens = contextSegments([], "sys", [a, b]).reduce((n, s) => n + s.tokens, 0);
    expect(cache.cachedTokens(full)).toBe(prefixTokens);
    expect(cache.cachedTokens(contextSegments([], "other", [a, b, c]))).toBe(0);
  });
});

describe("simulator event sequence", () => {
  it("produces a sequence the SDK accumulator accepts, for text plus parallel calls", async () => {
    const output = [
      toOutputItem({ type: "message", text: "Checking now, one moment please." }),
      toOutputItem({
        type: "function_call",
        name: "shell",
        callId: "call_1",
        arguments: '{"cmd":"ls -la /tmp"}',
      }),
      toOutputItem({ type: "function_call", name: "shell", callId: "call_2", arguments: '{"cmd":"pwd"}' }),
    ];
    const steps = buildEventSteps({
      initial: initialResponse("resp_test", { model: "m" }, "m"),
      output,
      finalStatus: "completed",
      usage: makeUsage(10, 4, 12),
      firstEventAtMs: 5,
      msPerToken: 1,
    });
    expect(steps.map((s) => s.event.sequence_number)).toEqual(steps.map((_, i) => i));
    expect(steps.every((s, i) => i === 0 || s.atMs >= (steps[i - 1]?.atMs ?? 0))).toBe(true);
    const final = await accumulateWithSdk(steps.map((s) => s.event));
    expect(final.status).toBe("completed");
    expect(final.output).toMatchObject(output);
    expect(final.usage?.input_tokens_details.cached_tokens).toBe(4);
    const cut = midstreamCutIndex(steps);
    expect(steps.slice(0, cut).filter((s) => s.event.type.endsWith(".delta"))).toHaveLength(3);
    expect(steps[cut - 1]?.event.type.endsWith(".delta")).toBe(true);
  });
});

describe("simulator emit_hex", () => {
  it("weaves the emitted text into a plain answer, a tool-output summary and a generated command", () => {
    const emit = "zebra";
    const directives = parseDirectives(`[sim:emit_hex=${Buffer.from(emit).toString("hex")}] [sim:tokens=10]`);
    const answer = planTurn(ctx([{ type: "message", role: "user", content: "hi" }]), directives);
    expect(answer.items[0]).toMatchObject({ type: "message", text: expect.stringContaining(` ${emit} `) });
    const tool = {
      name: "exec_command",
      parameters: { type: "object", properties: { cmd: { type: "string" } } },
    };
    const call = planTurn(ctx([{ type: "message", role: "user", content: "run `ls`" }], [tool]), directives);
    expect(call.items[0]).toMatchObject({
      type: "function_call",
      arguments: JSON.stringify({ cmd: `ls ${emit}` }),
    });
  });
});
