/**
 * Codex CLI (`codex exec`, @openai/codex 0.171.0) unchanged against a Claude-shaped and a
 * Gemini-shaped route through `npm start`'s stack (issue #26: "real clients unchanged"), one stack
 * per provider: `UPSTREAMS` sends the model Codex is configured with (`deltagate-sim`, the one its
 * model catalog describes, so no metadata warning item) to the simulator's Anthropic Messages or
 * Gemini endpoint with `hosted_tools: "omit"` (docs/anthropic.md and docs/gemini.md, "Namespace
 * tools and hosted tools"). Codex offers its `multi_agent_v1` namespace and `web_search` on every
 * request: the route offers the model the namespace's functions flattened
 * (`multi_agent_v1__spawn_agent`, …) and leaves `web_search` out, and the task — a real shell
 * command in Codex's sandbox — completes over the WebSocket, chained turn by turn, with every model
 * request in the provider's wire format (the Gemini simulator also checks each call goes back with
 * its thought signature).
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCodexExec, WEBSOCKET_FALLBACK_TEXT } from "../support/e2e-codex.ts";
import { useProxiedStack } from "../support/e2e-stack.ts";

type Json = Record<string, unknown>;

const cleanups: Array<() => void> = [];

afterAll(() => {
  for (const cleanup of cleanups) cleanup();
});

const PROVIDERS = [
  {
    provider: "Claude",
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

describe.each(PROVIDERS)("codex exec against a $provider-shaped route", (provider) => {
  const e2e = useProxiedStack({
    UPSTREAMS: JSON.stringify([
      {
        model: "deltagate-sim",
        ...provider.route,
        api_key_var: "UPSTREAM_API_KEY",
        hosted_tools: "omit",
      },
    ]),
  });

  it("runs a real shell tool call with Codex's namespace tool served and web_search left out", async () => {
    const proof = `hello-from-${provider.provider}-route-${randomUUID()}`;
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

    // Upstream: two requests in the provider's format (the warm-up generates nothing), each
    // offering the namespace's functions flattened and no web_search; the second carries the
    // first's call and its answer.
    const upstream = e2e.stack.simulator!.recorder.list();
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
});
