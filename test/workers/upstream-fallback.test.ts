/**
 * Retry and fallback across routes end to end (issue #4 §3), with the test routes of
 * vitest.config.ts: `sim-fallback*` = a dead port (1 retry) then the simulator; `sim-retry*` = the
 * simulator twice (2 retries, then 1 retry), so every attempt shows in the simulator's recorder.
 * Failures before the first event are retried a bounded number of times and fall back in
 * `UPSTREAMS` order; a failure after the first event and a 4xx are never retried; a catch-all
 * route is not part of another pattern's chain. The client sees none of the attempts: its turn is
 * announced once, and the failure that is finally reported ends it with `response.failed`.
 */
import { describe, expect, inject, it } from "vitest";
import { testId } from "../support/test-id.ts";
import { connect, simulatorRequests, uniqueSession } from "../support/ws-client.ts";

async function turn(model: string, input: string) {
  const ws = await connect({ session: uniqueSession("fallback") });
  ws.send({ type: "response.create", model, input });
  const frames = await ws.turn(0);
  ws.close();
  return frames;
}

const attempts = async (marker: string) => (await simulatorRequests(inject("simulatorUrl"), marker)).length;

describe("upstream retry and fallback", () => {
  it("falls back to the next route when the first is unreachable", async () => {
    const marker = `fb-dead-${testId()}`;
    const frames = await turn("sim-fallback-model", `${marker} hello [sim:tokens=5]`);
    expect(frames.at(-1)?.type).toBe("response.completed");
    expect(await attempts(marker)).toBe(1);
  });

  it("retries a 503 on each route of the chain, a bounded number of times, then reports it", async () => {
    const marker = `fb-503-${testId()}`;
    const frames = await turn("sim-retry-model", `${marker} [sim:fail=status:503]`);
    expect(frames.map((f) => f.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.failed",
    ]);
    expect(frames.at(-1)).toMatchObject({ response: { status: "failed", error: { code: "server_error" } } });
    // First route: 1 + 2 retries; second route: 1 + 1 retry; the catch-all "*" route is not tried.
    expect(await attempts(marker)).toBe(5);
  });

  it("retries a 429 the same way and reports the rate limit", async () => {
    const marker = `fb-429-${testId()}`;
    const frames = await turn("sim-retry-model", `${marker} [sim:fail=status:429]`);
    expect(frames.at(-1)).toMatchObject({
      response: { status: "failed", error: { code: "rate_limit_exceeded" } },
    });
    expect(await attempts(marker)).toBe(5);
  });

  it("does not retry a 4xx: the request itself is wrong", async () => {
    const marker = `fb-400-${testId()}`;
    const frames = await turn("sim-retry-model", `${marker} [sim:fail=status:400]`);
    expect(frames.at(-1)).toMatchObject({ type: "response.failed", response: { status: "failed" } });
    expect(await attempts(marker)).toBe(1);
  });

  it("never retries after the first event", async () => {
    const marker = `fb-mid-${testId()}`;
    const frames = await turn("sim-retry-model", `${marker} [sim:fail=midstream] [sim:tokens=80]`);
    expect(frames[0]?.type).toBe("response.created");
    expect(frames.at(-1)?.type).toBe("response.failed");
    expect(await attempts(marker)).toBe(1);
  });
});
