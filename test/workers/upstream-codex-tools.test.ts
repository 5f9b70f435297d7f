/**
 * The tools Codex CLI sends on every turn (test/support/codex-notes.md) on the Anthropic Messages
 * and Gemini routes, through the simulators (vitest.config.ts): a `namespace` tool's functions are
 * offered flattened (`ns__name`, src/upstream/tool-namespaces.ts), the provider's call of one
 * reaches the client as a `function_call` with `name` and `namespace`, and the client's answer goes
 * back paired with the call under the flattened name (the simulators refuse an unpaired result).
 * `web_search` is refused with a 400 naming it, or left out on a route whose operator chose
 * `hosted_tools: "omit"`.
 */
import { describe, expect, inject, it } from "vitest";
import { testId } from "../support/test-id.ts";
import { connect, type Frame, simulatorRequests, uniqueSession } from "../support/ws-client.ts";

const NAMESPACE = {
  type: "namespace",
  name: "multi_agent_v1",
  description: "Tools to run sub-agents.",
  tools: [
    {
      type: "function",
      name: "spawn_agent",
      description: "Spawns a sub-agent.",
      strict: false,
      parameters: {
        type: "object",
        properties: { cmd: { type: "string" } },
        required: ["cmd"],
        additionalProperties: false,
      },
    },
  ],
};

type Output = Array<Record<string, unknown>>;

function responseOf(frames: Frame[]) {
  return (
    frames.at(-1) as unknown as { type: string; response: { id: string; status: string; output: Output } }
  ).response;
}

const routes = [
  {
    provider: "Anthropic",
    model: "sim-claude",
    omitting: "sim-claude-omit",
    simulator: "anthropicSimulatorUrl" as const,
    offered: (body: Record<string, unknown>) =>
      (body.tools as Array<{ name: string }>).map((tool) => tool.name),
    calledBack: (body: Record<string, unknown>) =>
      (body.messages as Array<{ content: Array<Record<string, unknown>> }>)
        .flatMap((message) => message.content)
        .filter((block) => block.type === "tool_use" || block.type === "tool_result")
        .map((block) => (block.type === "tool_use" ? `use:${String(block.name)}` : "result")),
  },
  {
    provider: "Gemini",
    model: "sim-gemini",
    omitting: "sim-gemini-omit",
    simulator: "geminiSimulatorUrl" as const,
    offered: (body: Record<string, unknown>) =>
      (body.tools as Array<{ functionDeclarations: Array<{ name: string }> }>).flatMap((tool) =>
        tool.functionDeclarations.map((declaration) => declaration.name),
      ),
    calledBack: (body: Record<string, unknown>) =>
      (body.contents as Array<{ parts: Array<Record<string, { name?: string }>> }>)
        .flatMap((content) => content.parts)
        .filter((part) => part.functionCall || part.functionResponse)
        .map((part) =>
          part.functionCall
            ? `use:${String(part.functionCall.name)}`
            : `result:${String(part.functionResponse?.name)}`,
        ),
  },
];

describe.each(routes)("Codex's tools on the $provider route", (route) => {
  it("serves a namespace tool: the call comes back with its namespace and goes upstream flattened", async () => {
    const marker = `ns-${route.provider}-${testId()}`;
    const ws = await connect({ session: uniqueSession(`ns-${route.provider}`) });
    ws.send({
      type: "response.create",
      model: route.model,
      instructions: marker,
      tools: [NAMESPACE],
      input: "run `ls` [sim:tools=1]",
    });
    const first = responseOf(await ws.turn(0));
    expect(first.status).toBe("completed");
    const call = first.output.find((item) => item.type === "function_call");
    expect(call).toMatchObject({ name: "spawn_agent", namespace: "multi_agent_v1" });
    ws.send({
      type: "response.create",
      model: route.model,
      instructions: marker,
      tools: [NAMESPACE],
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: call?.call_id, output: "spawned" }],
    });
    const second = responseOf(await ws.turn(1));
    expect(second.status).toBe("completed");
    expect(second.output.at(-1)).toMatchObject({ type: "message" });
    const records = await simulatorRequests(inject(route.simulator), marker);
    expect(records.map((record) => record.status)).toEqual([200, 200]);
    const [firstBody, secondBody] = records.map((record) => record.body as Record<string, unknown>);
    if (!firstBody || !secondBody) throw new Error("two upstream requests expected");
    expect(route.offered(firstBody)).toEqual(["multi_agent_v1__spawn_agent"]);
    expect(route.calledBack(secondBody)).toEqual(
      route.provider === "Gemini"
        ? ["use:multi_agent_v1__spawn_agent", "result:multi_agent_v1__spawn_agent"]
        : ["use:multi_agent_v1__spawn_agent", "result"],
    );
    ws.close();
  });

  it("refuses web_search by default and leaves it out on a route with hosted_tools omit", async () => {
    const marker = `hosted-${route.provider}-${testId()}`;
    const ws = await connect({ session: uniqueSession(`hosted-${route.provider}`) });
    const tools = [NAMESPACE, { type: "web_search" }];
    ws.send({ type: "response.create", model: route.model, instructions: marker, tools, input: "hi" });
    const refused = await ws.turn(0);
    expect(refused[0]).toMatchObject({
      type: "error",
      status: 400,
      error: { code: "unsupported_value", param: "tools[1].type" },
    });
    ws.send({
      type: "response.create",
      model: route.omitting,
      instructions: marker,
      tools,
      input: "hi [sim:tokens=3]",
    });
    expect(responseOf(await ws.turn(1)).status).toBe("completed");
    const records = await simulatorRequests(inject(route.simulator), marker);
    expect(records).toHaveLength(1);
    expect(route.offered(records[0]?.body as Record<string, unknown>)).toEqual([
      "multi_agent_v1__spawn_agent",
    ]);
    ws.close();
  });
});
