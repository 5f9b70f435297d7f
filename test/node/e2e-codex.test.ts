/**
 * End-to-end proof with a real agent: the Codex CLI (`codex exec`, @openai/codex 0.171.0) runs a
 * task through Deltagate (`wrangler dev` + the reference simulator) over the Responses WebSocket.
 * The simulator asks for the prompt's backticked command in an `exec_command` call; Codex runs it
 * in its workspace-write sandbox, answers with the output, and Deltagate chains the turns.
 * Proven here: the shell tool really ran (proof.txt), Codex stayed on the WebSocket (no
 * "Falling back from WebSockets" item, a single upgrade, no `POST /v1/responses` at all — so the
 * test stays meaningful once Deltagate serves HTTP too), Codex chained every turn with
 * `previous_response_id` and only new items, and so did Deltagate upstream (the stack's default
 * route is WebSocket mode, issue #18): each turn is its new items on top of the upstream's previous
 * response, whose context carries the whole conversation.
 * Each turn's upstream stays silent for a while first (`delay_ms`, a long prefill) while the stack
 * sends keepalives every 300 ms: Codex takes the `keepalive` frames in stride.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCodexExec, WEBSOCKET_FALLBACK_TEXT } from "../support/e2e-codex.ts";
import { useProxiedStack } from "../support/e2e-stack.ts";
import { testId } from "../support/test-id.ts";

type Json = Record<string, unknown>;

const cleanups: Array<() => void> = [];

const e2e = useProxiedStack({ KEEPALIVE_MS: "300" });

afterAll(async () => {
  for (const cleanup of cleanups) cleanup();
});

describe("codex exec against wrangler dev", () => {
  it("runs a real shell tool call over the WebSocket, chained turn by turn, without falling back to HTTP", async () => {
    const proof = `hello-from-deltagate-${testId()}`;
    const run = await runCodexExec({
      baseUrl: `${e2e.proxy.url}/v1`,
      prompt: `Write the proof file by running \`echo ${proof} > proof.txt\` and report back. [sim:delay_ms=1000]`,
      timeoutMs: 60_000,
    });
    cleanups.push(run.cleanup);
    const diagnostics = `stdout:\n${run.stdout}\nstderr:\n${run.stderr}\nwrangler:\n${e2e.stack.output()}`;
    expect(run.timedOut, diagnostics).toBe(false);
    expect(run.code, diagnostics).toBe(0);

    // The tool call really ran in the sandboxed workspace.
    expect(readFileSync(join(run.workdir, "proof.txt"), "utf8")).toBe(`${proof}\n`);
    const commands = run.events.filter(
      (e) => e.type === "item.completed" && e.item?.type === "command_execution",
    );
    expect(commands).toHaveLength(1);
    expect(commands[0]?.item?.command).toContain(`echo ${proof} > proof.txt`);
    expect(commands[0]?.item?.exit_code).toBe(0);

    // The final agent message is the simulator's answer to the tool output, and Codex reported
    // no error item at all (in particular no WebSocket → HTTPS fallback).
    const items = run.events.flatMap((e) => (e.type === "item.completed" && e.item ? [e.item] : []));
    expect(items.filter((item) => item.type === "error")).toEqual([]);
    expect(run.stdout).not.toContain(WEBSOCKET_FALLBACK_TEXT);
    expect(items.at(-1)?.type).toBe("agent_message");
    expect(items.at(-1)?.text).toMatch(/^Done after 1 tool call\(s\)\./);
    expect(run.events.at(-1)?.type).toBe("turn.completed");

    // Transport: one WebSocket upgrade (101) and no HTTP request to /v1/responses.
    expect(e2e.proxy.upgrades.map((u) => [u.path, u.status])).toEqual([["/v1/responses", 101]]);
    expect(e2e.proxy.http.filter((r) => r.path.startsWith("/v1/responses"))).toEqual([]);

    // Client side: a generate:false warm-up, then each turn chains off the previous response
    // (warm-up included) and sends only its new items; the tool turn sends just the output.
    const creates = e2e.proxy.frames
      .filter((f) => f.from === "client")
      .map((f) => f.data as Json)
      .filter((f) => f.type === "response.create");
    const completed = e2e.proxy.frames
      .filter((f) => f.from === "server")
      .map((f) => f.data as Json)
      .filter((f) => f.type === "response.completed")
      .map((f) => f.response as { id: string; output: Json[] });
    expect(creates.map((c) => c.generate === false)).toEqual([true, false, false]);
    const keepalives = e2e.proxy.frames.filter(
      (f) => f.from === "server" && (f.data as Json).type === "keepalive",
    );
    expect(keepalives.length).toBeGreaterThan(0);
    expect(completed).toHaveLength(3);
    expect(creates[0]?.previous_response_id).toBeUndefined();
    expect(creates[1]?.previous_response_id).toBe(completed[0]?.id);
    expect(creates[2]?.previous_response_id).toBe(completed[1]?.id);
    const call = completed[1]?.output.find((item) => item.type === "function_call");
    expect(call?.name).toBe("exec_command");
    const toolTurnInput = creates[2]?.input as Json[];
    expect(toolTurnInput).toHaveLength(1);
    expect(toolTurnInput[0]).toMatchObject({ type: "function_call_output", call_id: call?.call_id });

    // Upstream side: the two generating turns over the upstream WebSocket, each with only its new
    // items (turn 1 on top of the pre-warmed warm-up, turn 2 the function_call_output), resolving
    // the whole context so far — warm-up input + turn-1 input, then that + the function_call +
    // the function_call_output.
    const upstream = e2e.stack
      .simulator!.recorder.list()
      .filter((r) => r.path === "/v1/responses" && (r.body as Json).generate !== false);
    expect(upstream).toHaveLength(2);
    expect(upstream.map((r) => r.status)).toEqual([200, 200]);
    const warmupItems = (creates[0]!.input as Json[]).length;
    const turnOneItems = (creates[1]!.input as Json[]).length;
    expect(upstream[0]?.contextItemCount).toBe(warmupItems + turnOneItems);
    expect(upstream[1]?.contextItemCount).toBe(warmupItems + turnOneItems + 2);
    expect(upstream.map((r) => r.transport)).toEqual(["ws", "ws"]);
    expect(upstream.map((r) => r.inputItemCount)).toEqual([turnOneItems, 1]);
    expect(upstream[0]?.rawText).toContain(proof);
    expect(upstream[1]?.rawText).toContain(String(call?.call_id));
  });
});
