/**
 * The local stack runs wrangler's dev server with no devtools inspector unless asked
 * (scripts/wrangler-dev.ts says why: with one, every `console.log` of the Worker, Deltagate's
 * per-turn log line included, is also a devtools event). Without one, no `workerd` of the stack
 * answers the devtools discovery endpoint (`GET /json/version`), so nothing holds a devtools
 * session on the runtime; with `inspectorPort` (`INSPECTOR_PORT` under `npm start`), the port
 * answers it, and the Worker still serves turns and logs its line either way. `npm start` refuses an
 * `INSPECTOR_PORT` that is not a port, naming it.
 */
import { afterAll, describe, expect, it } from "vitest";
import { freePort, type LocalStack, startLocalStack } from "../../scripts/local-stack.ts";
import { workerdListeningPorts } from "../../scripts/runtime-origin.ts";
import { startNpmStart } from "../support/npm-start.ts";

const stacks: LocalStack[] = [];
afterAll(async () => {
  await Promise.all(stacks.map((stack) => stack.stop()));
});

async function start(inspectorPort?: number): Promise<LocalStack> {
  const stack = await startLocalStack({
    port: 0,
    simulatorPort: 0,
    verbose: false,
    snapshot: true,
    ...(inspectorPort === undefined ? {} : { inspectorPort }),
  });
  stacks.push(stack);
  return stack;
}

/** Whether `port` answers the devtools discovery endpoint with a debugger's WebSocket. */
async function answersDevtools(port: number): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/json/version`, { signal: AbortSignal.timeout(2_000) });
    const text = await res.text();
    return res.ok && /"(webSocketDebuggerUrl|Protocol-Version)"/.test(text);
  } catch {
    return false;
  }
}

/** Runs one turn over HTTP; returns its status once the turn's log line is in the stack's output. */
async function turnLogged(stack: LocalStack): Promise<string> {
  const res = await fetch(`${stack.baseUrl}/responses`, {
    method: "POST",
    headers: { authorization: "Bearer dg-local-dev-key", "content-type": "application/json" },
    body: JSON.stringify({ model: stack.models[0], input: "hello" }),
  });
  const body = (await res.json()) as { id: string; status: string };
  const deadline = Date.now() + 10_000;
  while (!stack.output().includes(`"response_id":"${body.id}"`) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  expect(stack.output()).toContain(`"type":"deltagate.turn","transport":"http","response_id":"${body.id}"`);
  return body.status;
}

describe.concurrent("the local stack's devtools inspector", () => {
  it("is off by default: no workerd port answers /json/version; turns are served and logged", async () => {
    const stack = await start();
    expect(await turnLogged(stack)).toBe("completed");
    const ports = workerdListeningPorts(stack.processGroup ?? -1);
    // The proxy and the runtime at least: the check below looks at real ports.
    expect(ports.length).toBeGreaterThanOrEqual(2);
    const devtools = await Promise.all(ports.map(answersDevtools));
    expect(ports.filter((_, i) => devtools[i])).toEqual([]);
  });

  it("is on at inspectorPort when asked, with turns served and logged as well", async () => {
    const port = await freePort();
    const stack = await start(port);
    expect(await answersDevtools(port)).toBe(true);
    expect(await turnLogged(stack)).toBe("completed");
  });
});

describe.concurrent("npm start's INSPECTOR_PORT", () => {
  it("attaches the inspector on that port, and the banner says where", async () => {
    const port = await freePort();
    const stack = await startNpmStart({ INSPECTOR_PORT: String(port) });
    try {
      expect(await answersDevtools(port)).toBe(true);
      expect(stack.output()).toContain(`Devtools inspector: 127.0.0.1:${port} `);
    } finally {
      await stack.stop();
    }
  });

  it("refuses a value that is not a port, by name, before starting anything", async () => {
    await expect(startNpmStart({ INSPECTOR_PORT: "92x9" })).rejects.toThrow(
      'INSPECTOR_PORT must be a port number (1-65535), not "92x9"',
    );
  });
});
