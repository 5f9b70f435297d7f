/**
 * End-to-end proof with a real client: `npm run demo` (scripts/demo.ts, the openai SDK's
 * `ResponsesWS`) against the local stack `npm start` runs (`wrangler dev` + the reference
 * simulator, random ports, own temp persistence). A recording proxy between the demo and
 * Deltagate shows what the client sent; the simulator's recorder shows what Deltagate sent
 * upstream. The claim under test (issues #2, #18): over one WebSocket the client sends only the
 * new items each turn, and so does Deltagate upstream: the stack's default route is WebSocket mode
 * (the simulator speaks it), so each turn after the first is the new item on top of the
 * upstream's own previous response, whose context keeps growing. The simulator is shared with
 * other files: the demo's upstream requests are those of the conversation its tag starts
 * (test/support/sim-recorder.ts).
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../scripts/local-stack.ts";
import { runProcess } from "../support/e2e-process.ts";
import type { ProxiedFrame } from "../support/e2e-proxy.ts";
import { useSharedStack } from "../support/e2e-stack.ts";
import { markedUpstream } from "../support/sim-recorder.ts";
import { testId } from "../support/test-id.ts";

const TURNS = 20;

const e2e = useSharedStack();

type Json = Record<string, unknown>;

function objectOf(frame: ProxiedFrame): Json {
  expect(typeof frame.data === "object" && frame.data !== null).toBe(true);
  return frame.data as Json;
}

describe("npm run demo against wrangler dev", () => {
  it("runs 20 chained turns on one WebSocket: the client and Deltagate send only new items, the context grows", async () => {
    const tag = `[demo-e2e:${testId()}]`;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DELTAGATE_URL: `${e2e.proxy.url}/v1`,
      DELTAGATE_API_KEY: "dg-local-dev-key",
      MODEL: "deltagate-sim",
      TURNS: String(TURNS),
      DEMO_TAG: tag,
    };
    const demo = await runProcess(process.execPath, [join(REPO_ROOT, "scripts/demo.ts")], {
      cwd: REPO_ROOT,
      env,
      timeoutMs: 60_000,
    });
    const diagnostics = `stdout:\n${demo.stdout}\nstderr:\n${demo.stderr}\nwrangler:\n${await e2e.stack.output()}`;
    expect(demo.timedOut, diagnostics).toBe(false);
    expect(demo.code, diagnostics).toBe(0);

    // The demo's own report: 20 turn lines, each with a latency in ms, and the simulator's answer.
    const turnLines = demo.stdout.split("\n").filter((line) => /^turn\s+\d+:/.test(line));
    expect(turnLines, diagnostics).toHaveLength(TURNS);
    turnLines.forEach((line, index) => {
      expect(line).toMatch(new RegExp(`^turn\\s+${index + 1}:\\s+\\d+\\.\\d ms\\s`));
    });
    expect(demo.stdout).toContain(
      `final answer after ${TURNS} turn(s): Done after ${TURNS - 1} tool call(s).`,
    );

    // Client side: one upgrade, 20 response.create frames.
    expect(e2e.proxy.upgrades.map((u) => u.status)).toEqual([101]);
    expect(e2e.proxy.http.filter((r) => r.method === "POST")).toEqual([]);
    const creates = e2e.proxy.frames
      .filter((f) => f.from === "client")
      .map(objectOf)
      .filter((f) => f.type === "response.create");
    const completed = e2e.proxy.frames
      .filter((f) => f.from === "server")
      .map(objectOf)
      .filter((f) => f.type === "response.completed")
      .map((f) => f.response as { id: string; output: Json[] });
    expect(creates).toHaveLength(TURNS);
    expect(completed).toHaveLength(TURNS);
    // Turn 1 sends the prompt; every later turn sends only previous_response_id (the previous
    // turn's response) and the one function_call_output answering that response's call.
    expect(creates[0]?.previous_response_id).toBeUndefined();
    expect(creates[0]?.input).toEqual(expect.stringContaining(tag));
    const sentCallIds: string[] = [];
    for (let n = 1; n < TURNS; n++) {
      const create = creates[n]!;
      const previous = completed[n - 1]!;
      expect(create.previous_response_id).toBe(previous.id);
      const call = previous.output.find((item) => item.type === "function_call");
      expect(create.input).toEqual([
        { type: "function_call_output", call_id: call?.call_id, output: expect.any(String) },
      ]);
      sentCallIds.push(String(call?.call_id));
    }

    // Upstream side: one WebSocket-mode request per turn, the first with the prompt, every later
    // one only the new function_call_output on top of the upstream's previous response; the
    // context the upstream resolves grows by one function_call + function_call_output pair per
    // turn (1, 3, 5, … 39 items).
    const upstream = (await markedUpstream(e2e.stack.simulatorUrl, tag)).filter(
      (r) => r.path === "/v1/responses",
    );
    expect(upstream).toHaveLength(TURNS);
    expect(JSON.stringify(upstream[0]?.body)).toContain(tag);
    expect(upstream.map((r) => r.status)).toEqual(Array(TURNS).fill(200));
    expect(upstream.map((r) => r.contextItemCount)).toEqual(
      Array.from({ length: TURNS }, (_, n) => 1 + 2 * n),
    );
    expect(upstream.every((r) => r.transport === "ws")).toBe(true);
    expect(upstream.map((r) => r.inputItemCount)).toEqual(Array(TURNS).fill(1));
    expect(upstream.slice(1).every((r) => r.previousResponseId !== null)).toBe(true);
    // Each request carries its turn's new item (the client's function_call_output).
    sentCallIds.forEach((callId, index) => {
      expect(JSON.stringify(upstream[index + 1]?.body)).toContain(callId);
    });
  });
});
