/**
 * End-to-end proof that Codex's resume is a delta upstream (issue #27 item 4): the real Codex CLI
 * (@openai/codex 0.171.0) runs a task through `npm start`'s stack (`wrangler dev` + the reference
 * simulator), then `codex exec resume --last` continues that session on a new process and socket.
 * Codex opens the new socket with a `generate: false` warm-up (its instructions message) and
 * chains its first turn on it with the whole conversation so far plus the new prompt; both runs
 * ask for the reconnect window through the provider's `http_headers`
 * (`x-deltagate-store-false-grace`), so the first run's store:false chain stays continuable.
 * Proven here, from the simulator's recorder: the resume's warm-up is not sent upstream (it
 * repeats the start of the held chain), and its first model request goes upstream as a delta —
 * only the new prompt, on top of the upstream's response of the first run, which resolves the
 * whole conversation. The simulator is shared with other files: the thread's upstream requests are
 * those with its `prompt_cache_key`, which Codex sets to the thread id (test/support/codex-notes.md).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type CodexRun, runCodexExec, WEBSOCKET_FALLBACK_TEXT } from "../support/e2e-codex.ts";
import { useSharedStack } from "../support/e2e-stack.ts";
import { conversationRequests } from "../support/sim-recorder.ts";

type Json = Record<string, unknown>;

const cleanups: Array<() => void> = [];
afterAll(() => {
  for (const cleanup of cleanups) cleanup();
});

const e2e = useSharedStack();

/** Both runs ask for the reconnect window on their upgrade (docs/sessions.md, `store: false`). */
const GRACE = ['http_headers = { "x-deltagate-store-false-grace" = "300000" }'];

/** Checks a run ended well, on the WebSocket, with its tool call run. */
async function expectClean(run: CodexRun, file: string, text: string): Promise<void> {
  const diagnostics = `stdout:\n${run.stdout}\nstderr:\n${run.stderr}\nwrangler:\n${await e2e.stack.output()}`;
  expect(run.timedOut, diagnostics).toBe(false);
  expect(run.code, diagnostics).toBe(0);
  expect(run.stdout).not.toContain(WEBSOCKET_FALLBACK_TEXT);
  expect(readFileSync(join(run.workdir, file), "utf8")).toBe(`${text}\n`);
}

describe("codex exec resume --last against npm start's stack", () => {
  it("sends the resumed session's first model request upstream as a delta", async () => {
    const baseUrl = `${e2e.proxy.url}/v1`;
    const first = await runCodexExec({
      baseUrl,
      prompt: "Write the first file by running `echo one > one.txt` and report back.",
      timeoutMs: 60_000,
      keepSession: true,
      providerSettings: GRACE,
    });
    cleanups.push(first.cleanup);
    await expectClean(first, "one.txt", "one");
    const thread = first.events.find((e) => e.type === "thread.started")?.thread_id ?? "";
    expect(thread).not.toBe("");
    const upstreamOfThread = () => conversationRequests(e2e.stack.simulatorUrl, [thread]);
    const before = (await upstreamOfThread()).at(-1)?.seq ?? 0;
    expect(before).toBeGreaterThan(0); // the first run's requests carry the thread id

    const resumed = await runCodexExec({
      baseUrl,
      prompt: "Now write the second file by running `echo two > two.txt`.",
      timeoutMs: 60_000,
      resume: first,
      providerSettings: GRACE,
    });
    await expectClean(resumed, "two.txt", "two");
    // The same thread, on a second socket.
    const threads = [first, resumed].map(
      (run) => run.events.find((e) => e.type === "thread.started")?.thread_id,
    );
    expect(threads[1]).toBe(threads[0]);
    expect(e2e.proxy.upgrades.map((u) => u.status)).toEqual([101, 101]);
    expect(e2e.proxy.upgrades[1]?.headers["x-deltagate-store-false-grace"]).toBe("300000");

    // Client side, second socket: the warm-up, then the first turn chained on it, carrying the
    // whole conversation so far and the new prompt.
    const creates = e2e.proxy.frames
      .filter((f) => f.connection === 2 && f.from === "client")
      .map((f) => f.data as Json)
      .filter((f) => f.type === "response.create");
    const completed = e2e.proxy.frames
      .filter((f) => f.connection === 2 && f.from === "server")
      .map((f) => f.data as Json)
      .filter((f) => f.type === "response.completed")
      .map((f) => f.response as Json);
    expect(creates[0]?.generate).toBe(false);
    expect(creates[0]?.previous_response_id).toBeUndefined();
    const warmUpItems = (creates[0]?.input as Json[] | undefined)?.length ?? 0;
    expect(creates[1]?.previous_response_id).toBe(completed[0]?.id);
    const resendItems = (creates[1]?.input as Json[] | undefined)?.length ?? 0;
    expect(resendItems).toBeGreaterThan(5); // the first run's instructions, prompt, tool call, output, answer…
    // As the client sent it: the turn names its warm-up.
    expect(completed[1]?.previous_response_id).toBe(completed[0]?.id);

    // Upstream: the warm-up repeats the held chain's start and stays local; the first model
    // request after the resume is only the new prompt, chained on the upstream's response of the
    // first run, and the upstream resolves the whole context (warm-up input + the resend).
    const after = (await upstreamOfThread()).filter((r) => r.seq > before);
    expect(after.filter((r) => (r.body as Json).generate === false)).toEqual([]);
    const firstTurn = after[0]!;
    expect(firstTurn.transport).toBe("ws");
    expect(firstTurn.status).toBe(200);
    expect(firstTurn.previousResponseId).not.toBeNull();
    expect(firstTurn.inputItemCount).toBe(1);
    expect(JSON.stringify(firstTurn.body)).toContain("echo two > two.txt");
    expect(firstTurn.contextItemCount).toBe(warmUpItems + resendItems);
  });
});
