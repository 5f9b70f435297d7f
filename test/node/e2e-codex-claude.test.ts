/**
 * Codex CLI (`codex exec`, @openai/codex 0.171.0) unchanged against a Claude-shaped route through
 * `npm start`'s stack (issue #26: "real clients unchanged"): `UPSTREAMS` sends the model Codex is
 * configured with (`deltagate-sim`, the one its model catalog describes, so no metadata warning
 * item) to the simulator's Anthropic Messages endpoint with `hosted_tools: "omit"`
 * (docs/anthropic.md "Namespace tools and hosted tools"). Codex offers its `multi_agent_v1`
 * namespace and `web_search` on every request: the route offers Claude the namespace's functions
 * flattened (`multi_agent_v1__spawn_agent`, …) and leaves `web_search` out, and the task — a real
 * shell command in Codex's sandbox — completes over the WebSocket, chained turn by turn, with every
 * model request in Anthropic's wire format.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCodexExec, WEBSOCKET_FALLBACK_TEXT } from "../support/e2e-codex.ts";
import { useProxiedStack } from "../support/e2e-stack.ts";

type Json = Record<string, unknown>;

const cleanups: Array<() => void> = [];

const e2e = useProxiedStack({
  UPSTREAMS: JSON.stringify([
    {
      model: "deltagate-sim",
      api: "anthropic-messages",
      base_url: "{SIM}/v1",
      upstream_model: "claude-sim-1",
      api_key_var: "UPSTREAM_API_KEY",
      hosted_tools: "omit",
    },
  ]),
});

afterAll(() => {
  for (const cleanup of cleanups) cleanup();
});

describe("codex exec against a Claude-shaped route", () => {
  it("runs a real shell tool call with Codex's namespace tool served and web_search left out", async () => {
    const proof = `hello-from-claude-route-${randomUUID()}`;
    const run = await runCodexExec({
      baseUrl: `${e2e.proxy.url}/v1`,
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
    const creates = e2e.proxy.frames
      .filter((f) => f.from === "client")
      .map((f) => f.data as Json)
      .filter((f) => f.type === "response.create");
    expect(creates.map((c) => c.generate === false)).toEqual([true, false, false]);
    for (const create of creates) {
      const types = (create.tools as Json[]).map((tool) => tool.type);
      expect(types).toContain("namespace");
      expect(types).toContain("web_search");
    }

    // Upstream: two Messages requests (the warm-up generates nothing), each offering the
    // namespace's functions flattened and no web_search; the second answers the first's tool_use.
    const upstream = e2e.stack.simulator!.recorder.list();
    expect(upstream.map((r) => [r.path, r.status])).toEqual([
      ["/v1/messages", 200],
      ["/v1/messages", 200],
    ]);
    for (const record of upstream) {
      const names = ((record.body as Json).tools as Array<{ name: string }>).map((tool) => tool.name);
      expect(names).toContain("exec_command");
      expect(names).toContain("multi_agent_v1__spawn_agent");
      expect(names.some((name) => name.includes("web_search"))).toBe(false);
    }
    const second = upstream[1]?.body as Json | undefined;
    const messages = (second?.messages ?? []) as Array<{ content: Json[] }>;
    const blocks = messages.flatMap((message) => message.content).map((block) => block.type);
    expect(blocks).toContain("tool_use");
    expect(blocks).toContain("tool_result");
  });
});
