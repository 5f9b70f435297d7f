/**
 * Tracing in the local runtime (src/pipeline/turn-trace.ts): what a test can observe of it here.
 * workerd has the `tracing` API a turn uses (so the tracer is detected, as in production), but it
 * samples no invocation and exports nothing: every turn takes the unsampled path (one
 * `getActiveSpan()`, one boolean) and runs as before. To see a sampled turn's spans through the
 * real session (socket, engine, stages, SQLite, simulator), a session's WebSocket transport is
 * given a recording tracer whose invocation is sampled (test/support/recording-tracer.ts), and so
 * is its HTTP transport (the admission the Durable Object hands in runs in the turn's span). In a
 * deployment the spans show in Workers Observability and at the OTLP destinations wrangler.toml
 * names (docs/observability.md "Tracing").
 */
import { runInDurableObject } from "cloudflare:test";
import * as workers from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sampled, type Tracer, tracerOf } from "../../src/pipeline/turn-trace.ts";
import { recordingTracer } from "../support/recording-tracer.ts";
import { sessionStub } from "../support/session-stub.ts";
import { connect, KEY_A, uniqueSession, workerFetch } from "../support/ws-client.ts";

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

  it("a sampled WebSocket turn through the real session: its span, stage spans and attributes", async () => {
    const session = uniqueSession("trace");
    const ws = await connect({ session });
    const recording = recordingTracer(true);
    await runInDurableObject(sessionStub("tenant-a", session), (instance) => {
      const parts = (instance as unknown as { parts: { ws: { tracer: Tracer | null } } }).parts;
      parts.ws.tracer = recording.tracer;
    });
    ws.send({ type: "response.create", model: "deltagate-sim", input: "hi [sim:tokens=4]" });
    const frames = await ws.turn(0);
    const done = frames.at(-1) as unknown as { response: { id: string; usage: { input_tokens: number } } };
    const turn = () => recording.named("chat deltagate-sim");
    await ws.until(() => turn()?.ends === 1); // ended after the terminal event (reportTiming)
    ws.close();
    // In the default `parallel` safety mode the upstream is asked before the input check starts.
    // (The recording tracer sees parents of synchronous callbacks only: nesting is the runtime's.)
    const spans = recording.spans.map((span) => `${span.name} ${span.ends}`);
    expect(spans.sort()).toEqual([
      "chat deltagate-sim 1",
      "deltagate.admission 1",
      "deltagate.commit 1",
      "deltagate.context 1",
      "deltagate.safety 1",
      "deltagate.upstream_first_event 1",
    ]);
    const attributes = turn()!.attributes;
    expect(attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "deltagate-sim",
      "gen_ai.provider.name": "openai", // its route speaks the Responses API
      "gen_ai.response.id": done.response.id,
      "gen_ai.usage.input_tokens": done.response.usage.input_tokens,
      "deltagate.transport": "websocket",
      "deltagate.response.status": "completed",
      "deltagate.chained": false,
    });
    for (const key of [
      "gen_ai.usage.output_tokens",
      "gen_ai.response.time_to_first_chunk",
      "deltagate.stage.total_ms",
      "deltagate.upstream_request_bytes",
    ]) {
      expect(typeof attributes[key], key).toBe("number");
    }
  });

  it("a sampled HTTP turn through the real session (an Anthropic route): admission, stages, provider and usage", async () => {
    const session = uniqueSession("trace-http");
    const headers = {
      authorization: `Bearer ${KEY_A}`,
      "content-type": "application/json",
      "session-id": session,
    };
    const post = () =>
      workerFetch("/v1/responses", {
        method: "POST",
        headers,
        body: JSON.stringify({ model: "sim-claude", input: "hi" }),
      });
    expect((await post()).status).toBe(200); // the session exists (and claimed its tenant)
    const recording = recordingTracer(true);
    await runInDurableObject(sessionStub("tenant-a", session), (instance) => {
      const parts = (instance as unknown as { parts: { http: { deps: { tracer: Tracer | null } } } }).parts;
      parts.http.deps.tracer = recording.tracer;
    });
    const response = await post();
    const body = (await response.json()) as { id: string; usage: { input_tokens: number } };
    const turn = recording.named("chat sim-claude");
    expect(turn?.ends).toBe(1); // a non-streaming turn's span ends before its answer
    expect(recording.spans.map((span) => `${span.name} ${span.ends}`).sort()).toEqual([
      "chat sim-claude 1",
      "deltagate.admission 1",
      "deltagate.commit 1",
      "deltagate.context 1",
      "deltagate.safety 1",
      "deltagate.upstream_first_event 1",
    ]);
    expect(recording.named("deltagate.admission")?.parent).toBe("chat sim-claude");
    expect(turn?.attributes).toMatchObject({
      "gen_ai.request.model": "sim-claude",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.stream": false,
      "gen_ai.response.id": body.id,
      "gen_ai.usage.input_tokens": body.usage.input_tokens,
      "deltagate.transport": "http",
      "deltagate.response.status": "completed",
    });
  });
});
