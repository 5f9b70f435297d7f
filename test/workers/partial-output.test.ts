/**
 * What a client saw is what is stored (issue #10 item 3): when the upstream fails mid-stream, the
 * failed response keeps the output its client was sent — the text cut where the stream stopped
 * (`status: "incomplete"`), finished items as they were — with the usage so far; a chain continued
 * from it sends the upstream exactly that text, and an item cut before it finished (a tool call
 * whose arguments never completed) is left out of the context, together with what depends on it,
 * so a strict upstream accepts the history.
 */
import { describe, expect, inject, it } from "vitest";
import { SHELL_TOOL } from "../support/fixtures.ts";
import { countRows } from "../support/session-stub.ts";
import { testId } from "../support/test-id.ts";
import { connect, type Frame, KEY_A, uniqueSession, workerFetch } from "../support/ws-client.ts";
import { recorded } from "./upstream-ws-loop.ts";

const MODEL = "deltagate-sim";

type Item = {
  id: string;
  type: string;
  status?: string;
  role?: string;
  call_id?: string;
  content?: Array<{ type: string; text?: string }>;
};
type ResponseJson = {
  id: string;
  status: string;
  output: Item[];
  usage: { input_tokens: number; output_tokens: number } | null;
};
const responseOf = (frames: Frame[]) => (frames.at(-1) as unknown as { response: ResponseJson }).response;
const deltaText = (frames: Frame[]) =>
  frames
    .filter((f) => f.type === "response.output_text.delta")
    .map((f) => String(f.delta))
    .join("");

describe("partial output of an interrupted response", () => {
  it("stores the text the client was sent when the upstream fails mid-stream, and continues from it", async () => {
    const simulatorUrl = inject("simulatorUrl");
    const marker = `partial-${testId()}`;
    const session = uniqueSession("partial");
    const ws = await connect({ session });
    ws.send({
      type: "response.create",
      model: MODEL,
      input: `${marker} [sim:fail=midstream] [sim:tokens=80]`,
    });
    const frames = await ws.turn(0);
    const failed = responseOf(frames);
    expect(failed.status).toBe("failed");
    const seen = deltaText(frames);
    expect(seen.length).toBeGreaterThan(0);
    expect(failed.output).toHaveLength(1);
    expect(failed.output[0]).toMatchObject({ type: "message", role: "assistant", status: "incomplete" });
    expect(failed.output[0]?.content?.[0]?.text).toBe(seen);
    expect(failed.usage?.output_tokens).toBeGreaterThan(0);
    // Stored, and served over HTTP, as it was streamed.
    const retrieved = (await (
      await workerFetch(`/v1/responses/${failed.id}`, { headers: { authorization: `Bearer ${KEY_A}` } })
    ).json()) as ResponseJson;
    expect(retrieved.output).toEqual(failed.output);
    expect(retrieved.usage).toEqual(failed.usage);
    expect(await countRows("tenant-a", session, "items", `response_id = '${failed.id}' AND kind = 1`)).toBe(
      1,
    );

    ws.send({
      type: "response.create",
      model: MODEL,
      previous_response_id: failed.id,
      input: `${marker} go on`,
    });
    expect((await ws.turn(1)).at(-1)?.type).toBe("response.completed");
    const [, next] = await recorded(simulatorUrl, marker);
    const assistant = next?.body.input?.find((item) => item.role === "assistant") as Item | undefined;
    expect(assistant?.content?.[0]?.text).toBe(seen);
    ws.close();
  });

  it("leaves a tool call cut mid-stream out of the continuation's context", async () => {
    const simulatorUrl = inject("simulatorUrl");
    const marker = `partial-call-${testId()}`;
    const ws = await connect({ session: uniqueSession("partial-call") });
    ws.send({
      type: "response.create",
      model: MODEL,
      tools: [SHELL_TOOL],
      input: `${marker} run \`ls\` [sim:parallel=3] [sim:fail=midstream]`,
    });
    const failed = responseOf(await ws.turn(0));
    expect(failed.status).toBe("failed");
    const calls = failed.output.filter((item) => item.type === "function_call");
    expect(calls.map((call) => call.status)).toEqual(["completed", "completed", "in_progress"]);
    // The client answers the calls it saw finished.
    ws.send({
      type: "response.create",
      model: MODEL,
      tools: [SHELL_TOOL],
      previous_response_id: failed.id,
      input: calls
        .slice(0, 2)
        .map((call) => ({ type: "function_call_output", call_id: call.call_id, output: "ok" })),
    });
    const next = await ws.turn(1);
    // Not refused (directives persist across a user message's turns: this one is cut again).
    expect(next.at(-1)).toMatchObject({
      type: "response.failed",
      response: { error: { code: "upstream_error" } },
    });
    const [, sent] = await recorded(simulatorUrl, marker);
    expect(sent?.status).toBe(200);
    const sentCalls = (sent?.body.input ?? []).filter((item) => item.type === "function_call");
    expect(sentCalls.map((item) => item.call_id)).toEqual(calls.slice(0, 2).map((call) => call.call_id));
    ws.close();
  });
});
