/**
 * `npm start` passes docs/configuration.md's settings on to the Worker (issue #7): started as a
 * user starts it, with `UPSTREAM_API=responses-http` (the simulator's default is `responses-ws`), or with an `UPSTREAMS` routing table (and the
 * secret its `api_key_var` names, and `MODELS`), its turns reach the simulator the way the
 * settings say; and its banner prints the demo command for the port it runs on.
 */
import { describe, expect, it } from "vitest";
import { type NpmStart, startNpmStart } from "../support/npm-start.ts";
import { testId } from "../support/test-id.ts";

/** A recorded upstream request (the fields of `/_sim/requests` used here). */
interface Recorded {
  transport: string;
  path: string;
  status: number | null;
}

/** Runs one non-streamed turn over HTTP and returns the response's status. */
async function turn(stack: NpmStart, model: string, input: string): Promise<string> {
  const res = await fetch(`${stack.origin}/v1/responses`, {
    method: "POST",
    headers: { authorization: "Bearer dg-local-dev-key", "content-type": "application/json" },
    body: JSON.stringify({ model, input }),
  });
  const body = (await res.json()) as { status?: string; error?: unknown };
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.status ?? "";
}

/** The upstream requests whose body contains `marker`. */
async function upstreamRequests(stack: NpmStart, marker: string): Promise<Recorded[]> {
  const res = await fetch(`${stack.simulatorUrl}/_sim/requests?contains=${encodeURIComponent(marker)}`);
  return ((await res.json()) as { data: Recorded[] }).data;
}

describe.concurrent("npm start forwards every setting to the Worker", () => {
  // The simulator's default route is WebSocket mode (issue #18; e2e-demo shows it), so the
  // setting is proven by switching to HTTP.
  it("UPSTREAM_API=responses-http: turns go over upstream HTTP; the banner names the port", async () => {
    const stack = await startNpmStart({ UPSTREAM_API: "responses-http" });
    try {
      const marker = `[http-setting:${testId()}]`;
      expect(await turn(stack, "deltagate-sim", `hello ${marker}`)).toBe("completed");
      const requests = await upstreamRequests(stack, marker);
      expect(requests.map((r) => r.transport)).toEqual(["http"]);
      expect(stack.output()).toContain(
        `Try it: DELTAGATE_URL=http://127.0.0.1:${stack.port}/v1 npm run demo `,
      );
    } finally {
      await stack.stop();
    }
  });

  it("UPSTREAMS (with its api_key_var secret) and MODELS: each model takes its route", async () => {
    const routes = [
      { model: "chat-*", api: "chat-completions", base_url: "{SIM}/v1", api_key_var: "SIM_ROUTE_KEY" },
      { model: "*", api: "responses-http", base_url: "{SIM}/v1" },
    ];
    const stack = await startNpmStart({
      UPSTREAMS: JSON.stringify(routes, null, 2), // over several lines, as a shell user writes it
      SIM_ROUTE_KEY: "sim-route-key",
      MODELS: "chat-small,deltagate-sim",
    });
    try {
      const models = await fetch(`${stack.origin}/v1/models`, {
        headers: { authorization: "Bearer dg-local-dev-key" },
      });
      const listed = ((await models.json()) as { data: { id: string }[] }).data.map((m) => m.id);
      expect(listed).toEqual(["chat-small", "deltagate-sim"]);

      const chat = `[chat-route:${testId()}]`;
      expect(await turn(stack, "chat-small", `hello ${chat}`)).toBe("completed");
      expect((await upstreamRequests(stack, chat)).map((r) => [r.transport, r.path])).toEqual([
        ["chat", "/v1/chat/completions"],
      ]);
      const responses = `[responses-route:${testId()}]`;
      expect(await turn(stack, "deltagate-sim", `hello ${responses}`)).toBe("completed");
      expect((await upstreamRequests(stack, responses)).map((r) => [r.transport, r.path])).toEqual([
        ["http", "/v1/responses"],
      ]);
      expect(stack.output()).toContain(
        `Try it: DELTAGATE_URL=http://127.0.0.1:${stack.port}/v1 MODEL=chat-small npm run demo `,
      );
    } finally {
      await stack.stop();
    }
  });
});
