/**
 * Tracing in the local runtime (src/pipeline/turn-trace.ts): what a test can observe of it here.
 * workerd has the `tracing` API a turn uses (so the tracer is detected, as in production), but it
 * samples no invocation and exports nothing: every turn takes the unsampled path (one
 * `getActiveSpan()`, one boolean) and runs as before. The spans' names and attributes are tested
 * against a recording tracer (test/unit/pipeline/turn-trace.test.ts); in a deployment they show
 * in Workers Observability and at the OTLP destinations wrangler.toml names (README "Tracing").
 */
import * as workers from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sampled, tracerOf } from "../../src/pipeline/turn-trace.ts";
import { KEY_A, workerFetch } from "../support/ws-client.ts";

describe("tracing in the local runtime", () => {
  it("has the calls a turn makes, and samples nothing", () => {
    const tracer = tracerOf(workers);
    expect(tracer).not.toBeNull();
    expect(sampled(tracer)).toBe(false);
    // Outside a sampled invocation a span records nothing (and says so).
    tracer?.startActiveSpan("probe", (span) => {
      expect(span.isTraced).toBe(false);
      span.end();
    });
  });

  it("a turn runs on the unsampled path as before", async () => {
    const response = await workerFetch("/v1/responses", {
      method: "POST",
      headers: { authorization: `Bearer ${KEY_A}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "deltagate-sim", input: "hi [sim:tokens=4]" }),
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { status: string }).status).toBe("completed");
  });
});
