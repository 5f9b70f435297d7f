/**
 * Codex CLI (`codex exec`, @openai/codex 0.171.0) unchanged against a Claude-shaped and a
 * Gemini-shaped route through `npm start`'s stack (issue #26: "real clients unchanged"), one stack
 * for both: `UPSTREAMS` sends each model Codex is configured with (`deltagate-sim-claude`,
 * `deltagate-sim-gemini`: its model catalog describes them, so no metadata warning item) to the
 * simulator's Anthropic Messages or Gemini endpoint with `hosted_tools: "omit"` (docs/anthropic.md
 * and docs/gemini.md, "Namespace tools and hosted tools"). The tests run one after the other and
 * each reads only what the stack recorded (upstream requests, client frames) since it started. Codex offers its `multi_agent_v1` namespace and `web_search` on every
 * request: the route offers the model the namespace's functions flattened
 * (`multi_agent_v1__spawn_agent`, …) and leaves `web_search` out, and the task — a real shell
 * command in Codex's sandbox — completes over the WebSocket, chained turn by turn, with every model
 * request in the provider's wire format (the Gemini simulator also checks each call goes back with
 * its thought signature). Then `codex exec resume --last` continues the session on a new process
 * and socket: its first model request goes to the provider with the first run's call and result
 * and the new prompt (a stateless provider is sent the whole context; its prompt cache is what
 * saves the prefill: docs/anthropic.md).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type CodexRun, runCodexExec, WEBSOCKET_FALLBACK_TEXT } from "../support/e2e-codex.ts";
import { useProxiedStack } from "../support/e2e-stack.ts";
import { testId } from "../support/test-id.ts";

type Json = Record<string, unknown>;

const cleanups: Array<() => void> = [];

afterAll(() => {
  for (const cleanup of cleanups) cleanup();
});

const PROVIDERS = [
  {
    provider: "Claude",
    model: "deltagate-sim-claude",
    route: { api: "anthropic-messages", base_url: "{SIM}/v1", upstream_model: "claude-sim-1" },
    path: "/v1/messages",
    offered: (body: Json) => (body.tools as Array<{ name: string }>).map((tool) => tool.name),
    /** The call and its answer in the second request. */
    loop: (body: Json) =>
      (body.messages as Array<{ content: Json[] }>)
        .flatMap((message) => message.content)
        .map((block) => String(block.type))
        .filter((type) => type.startsWith("tool_")),
    expectedLoop: ["tool_use", "tool_result"],
  },
  {
    provider: "Gemini",
    model: "deltagate-sim-gemini",
    route: { api: "gemini", base_url: "{SIM}/v1beta", upstream_model: "gemini-3-flash-sim" },
    path: "/v1beta/models/gemini-3-flash-sim:streamGenerateContent",
    offered: (body: Json) =>
      (body.tools as Array<{ functionDeclarations: Array<{ name: string }> }>).flatMap((tool) =>
        tool.functionDeclarations.map((declaration) => declaration.name),
      ),
    loop: (body: Json) =>
      (body.contents as Array<{ parts: Json[] }>)
        .flatMap((content) => content.parts)
        .flatMap((part) =>
          part.functionCall ? ["functionCall"] : part.functionResponse ? ["functionResponse"] : [],
        ),
    expectedLoop: ["functionCall", "functionResponse"],
  },
] as const;

const e2e = useProxiedStack({
  UPSTREAMS: JSON.stringify(
    PROVIDERS.map((provider) => ({
      model: provider.model,
      ...provider.route,
      api_key_var: "UPSTREAM_API_KEY",
      hosted_tools: "omit",
    })),
  ),
});

/** What the stack records from now on: upstream requests and client frames (the tests run in turn). */
function recordedFromNow() {
  const upstreamFrom = e2e.stack.simulator!.recorder.list().length;
  const framesFrom = e2e.proxy.frames.length;
  return {
    upstream: () => e2e.stack.simulator!.recorder.list().slice(upstreamFrom),
    frames: () => e2e.proxy.frames.slice(framesFrom),
  };
}

describe.each(PROVIDERS)("codex exec against a $provider-shaped route", (provider) => {
  it("runs a real shell tool call with Codex's namespace tool served and web_search left out", async () => {
    const proof = `hello-from-${provider.provider}-route-${testId()}`;
    const recorded = recordedFromNow();
    const run = await runCodexExec({
      baseUrl: `${e2e.proxy.url}/v1`,
      model: provider.model,
      prompt: `Write the proof file by running \`echo ${proof} > proof.txt\` and report back.`,
      timeoutMs: 60_000,
    });
    cleanups.push(run.cleanup);
    const diagnostics = `stdout:\n${run.stdout}\nstderr:\n${run.stderr}\nwrangler:\n${e2e.stack.output()}`;
    expect(run.timedOut, diagnostics).toBe(false);
    expect(run.code, diagnostics).toBe(0);
    expect(readFileSync(join(run.workdir, "proof.txt"), "utf8")).toBe(`${proof}\n`);
    const items = run.events.flatMap((e) => (e.type === "item.completed" && e.item ? [e.item] : []));
    expect(
      items.filter((item) => item.type === "error"),
      diagnostics,
    ).toEqual([]);
    expect(run.stdout).not.toContain(WEBSOCKET_FALLBACK_TEXT);
    expect(items.at(-1)?.type).toBe("agent_message");
    expect(items.at(-1)?.text).toMatch(/^Done after 1 tool call\(s\)\./);

    // Codex offered its namespace and web_search on every frame, and chained its turns.
    const creates = recorded
      .frames()
      .filter((f) => f.from === "client")
      .map((f) => f.data as Json)
      .filter((f) => f.type === "response.create");
    expect(creates.map((c) => c.generate === false)).toEqual([true, false, false]);
    for (const create of creates) {
      const types = (create.tools as Json[]).map((tool) => tool.type);
      expect(types).toContain("namespace");
      expect(types).toContain("web_search");
    }

    // Upstream: two requests in the provider's format (the warm-up generates nothing), each
    // offering the namespace's functions flattened and no web_search; the second carries the
    // first's call and its answer.
    const upstream = recorded.upstream();
    expect(upstream.map((r) => [r.path, r.status])).toEqual([
      [provider.path, 200],
      [provider.path, 200],
    ]);
    for (const record of upstream) {
      const names = provider.offered(record.body as Json);
      expect(names).toContain("exec_command");
      expect(names).toContain("multi_agent_v1__spawn_agent");
      expect(names.some((name) => name.includes("web_search"))).toBe(false);
    }
    expect(provider.loop((upstream[1]?.body ?? {}) as Json)).toEqual(provider.expectedLoop);
  });

  it("resumes the session (codex exec resume --last) with the whole conversation sent to the provider", async () => {
    const baseUrl = `${e2e.proxy.url}/v1`;
    const clean = (run: CodexRun, file: string, text: string) => {
      const diagnostics = `stdout:\n${run.stdout}\nstderr:\n${run.stderr}\nwrangler:\n${e2e.stack.output()}`;
      expect(run.timedOut, diagnostics).toBe(false);
      expect(run.code, diagnostics).toBe(0);
      expect(run.stdout).not.toContain(WEBSOCKET_FALLBACK_TEXT);
      expect(readFileSync(join(run.workdir, file), "utf8")).toBe(`${text}\n`);
    };
    const first = await runCodexExec({
      baseUrl,
      model: provider.model,
      prompt: "Write the first file by running `echo one > one.txt` and report back.",
      timeoutMs: 60_000,
      keepSession: true,
    });
    cleanups.push(first.cleanup);
    clean(first, "one.txt", "one");
    const recorded = recordedFromNow();
    const resumed = await runCodexExec({
      baseUrl,
      model: provider.model,
      prompt: "Now write the second file by running `echo two > two.txt`.",
      timeoutMs: 60_000,
      resume: first,
    });
    clean(resumed, "two.txt", "two");
    const threads = [first, resumed].map(
      (run) => run.events.find((e) => e.type === "thread.started")?.thread_id,
    );
    expect(threads[1]).toBe(threads[0]);

    // The resumed run's first model request: the provider's format, the first run's call and
    // result, then the new prompt.
    const after = recorded.upstream();
    expect(after.map((r) => [r.path, r.status])[0]).toEqual([provider.path, 200]);
    const firstResumed = (after[0]?.body ?? {}) as Json;
    expect(provider.loop(firstResumed)).toEqual(provider.expectedLoop);
    expect(JSON.stringify(firstResumed)).toContain("echo one > one.txt");
    expect(JSON.stringify(firstResumed)).toContain("echo two > two.txt");
  });
});
