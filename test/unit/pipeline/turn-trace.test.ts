/**
 * A turn's OpenTelemetry trace (src/pipeline/turn-trace.ts), against a recording tracer with the
 * runtime's `tracing` shape (the local runtime never samples, so its spans cannot be seen there):
 * - the runtime's tracer is detected once from the module namespace; a runtime without it, or a
 *   turn whose invocation is not sampled, opens no span at all;
 * - a sampled turn is one `chat {model}` span with the GenAI semantic conventions' attributes and
 *   Deltagate's own, and a child span per stage, each ended: `deltagate.context`,
 *   `deltagate.upstream_first_event`, `deltagate.commit` from a real `TurnEngine` and timing
 *   stage, `deltagate.safety` around the input check, `deltagate.admission` from the HTTP transport;
 * - both transports open a sampled turn's span with its `deltagate.admission` span and end it with
 *   the turn, or at once with its error code when the create never runs (refused, socket gone);
 * - an unsampled turn through the same code calls nothing on the tracer but `getActiveSpan`.
 */
import { describe, expect, it } from "vitest";
import { EMPTY_CONTEXT } from "../../../src/context/counted-context.ts";
import { LiveRegistry } from "../../../src/engine/live-responses.ts";
import type { TurnEngine } from "../../../src/engine/turn-engine.ts";
import { TurnEngine as Engine } from "../../../src/engine/turn-engine.ts";
import { timingStage } from "../../../src/pipeline/timing-stage.ts";
import { TurnTimer } from "../../../src/pipeline/turn-timer.ts";
import {
  genAiProvider,
  sampled,
  type Tracer,
  type TurnTrace,
  tracerOf,
  traceTurn,
} from "../../../src/pipeline/turn-trace.ts";
import { createRequest } from "../../../src/protocol/create-request.ts";
import { ApiError } from "../../../src/protocol/errors.ts";
import { DEFAULT_POLICY } from "../../../src/safety/policy.ts";
import { safeUpstream } from "../../../src/safety/safe-upstream.ts";
import { SecretRedactor } from "../../../src/secrets/redactor.ts";
import type { AdmissionVerdict, Admitted } from "../../../src/session/admission.ts";
import { Connection } from "../../../src/session/connection.ts";
import { AFFINITY_MAX_RUNNING, HttpTransport } from "../../../src/session/http-transport.ts";
import { WebSocketTransport } from "../../../src/session/ws-transport.ts";
import type { ConversationStore } from "../../../src/store/conversation-store.ts";
import type { Upstream, UpstreamEvent, UpstreamRequest } from "../../../src/upstream/upstream.ts";
import { recordingTracer } from "../../support/recording-tracer.ts";

const TURN = {
  transport: "websocket",
  session: "ab".repeat(32),
  model: "gpt-5.1",
  provider: (model: string) =>
    genAiProvider(model.startsWith("claude") ? "anthropic-messages" : "responses-ws"),
  store: false,
  stream: true,
} as const;

describe("tracerOf", () => {
  it("is null for a runtime without tracing, or without the calls a turn makes", () => {
    expect(tracerOf(undefined)).toBeNull();
    expect(tracerOf({})).toBeNull();
    expect(tracerOf({ tracing: { enterSpan: () => {} } })).toBeNull();
  });

  it("is the module's tracing when it has them", () => {
    const { tracer } = recordingTracer(true);
    expect(tracerOf({ tracing: tracer })).toBe(tracer);
  });
});

describe("genAiProvider", () => {
  it("is the conventions' value of a route's wire API, openai for the OpenAI APIs and no route", () => {
    expect(genAiProvider("anthropic-messages")).toBe("anthropic");
    expect(genAiProvider("gemini")).toBe("gcp.gemini");
    for (const api of ["responses-ws", "responses-http", "chat-completions", null] as const) {
      expect(genAiProvider(api)).toBe("openai");
    }
  });
});

describe("sampled", () => {
  it("asks the active span whether the invocation is traced", () => {
    expect(sampled(null)).toBe(false);
    expect(sampled(recordingTracer(false).tracer)).toBe(false);
    expect(sampled(recordingTracer(true).tracer)).toBe(true);
    const outside: Tracer = { ...recordingTracer(true).tracer, getActiveSpan: () => undefined };
    expect(sampled(outside)).toBe(false);
  });
});

describe("TurnTrace", () => {
  it("is a `chat {model}` span with the request's GenAI and Deltagate attributes", () => {
    const { tracer, named } = recordingTracer(true);
    traceTurn(tracer, TURN, () => {});
    expect(named("chat gpt-5.1")?.attributes).toEqual({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "gpt-5.1",
      "gen_ai.request.stream": true,
      "gen_ai.conversation.id": TURN.session,
      "deltagate.session": TURN.session,
      "deltagate.transport": "websocket",
      "deltagate.store": false,
    });
    expect(named("chat gpt-5.1")?.ends).toBe(0); // open until finish
  });

  it("names the provider of the model its admission settled on (an alias resolved)", () => {
    const { tracer, named } = recordingTracer(true);
    traceTurn(tracer, { ...TURN, model: "fast" }, (trace) => trace.admitted("claude-haiku-4-5"));
    expect(named("chat fast")?.attributes).toMatchObject({
      "gen_ai.request.model": "fast",
      "deltagate.model": "claude-haiku-4-5",
      "gen_ai.provider.name": "anthropic",
    });
    traceTurn(tracer, TURN, (trace) => trace.admitted("gpt-5.1"));
    expect(named("chat gpt-5.1")?.attributes).not.toHaveProperty("deltagate.model");
  });

  it("opens each stage's span as a child of the turn's", () => {
    const { tracer, spans } = recordingTracer(true);
    traceTurn(tracer, TURN, (trace) => {
      for (const stage of ["admission", "context", "safety", "upstream_first_event", "commit"] as const) {
        trace.start(stage).end();
      }
    });
    expect(spans.slice(1).map((span) => [span.name, span.parent, span.ends])).toEqual([
      ["deltagate.admission", "chat gpt-5.1", 1],
      ["deltagate.context", "chat gpt-5.1", 1],
      ["deltagate.safety", "chat gpt-5.1", 1],
      ["deltagate.upstream_first_event", "chat gpt-5.1", 1],
      ["deltagate.commit", "chat gpt-5.1", 1],
    ]);
  });

  it("ends with usage, time to first chunk (s), the stages' ms and the turn's facts", () => {
    const { tracer, named } = recordingTracer(true);
    let trace!: TurnTrace;
    traceTurn(tracer, TURN, (t) => {
      trace = t;
    });
    trace.response("resp_1", "completed", {
      input_tokens: 120,
      output_tokens: 7,
      input_tokens_details: { cached_tokens: 96 },
      output_tokens_details: { reasoning_tokens: 3 },
    });
    trace.finish(
      { parse: 0.1, upstream_connect: 20, upstream_first_event: 230.5, commit: 0.4, edge: 1.2, total: 400 },
      { chained: true, resend_matched_items: 11, upstream_input_items: 1, upstream_request_bytes: 321 },
      null,
    );
    trace.finish({}, {}, "ignored"); // a second finish changes nothing
    const span = named("chat gpt-5.1")!;
    expect(span.ends).toBe(1);
    expect(span.status).toBeNull();
    expect(span.attributes).toMatchObject({
      "gen_ai.response.id": "resp_1",
      "deltagate.response.status": "completed",
      "gen_ai.usage.input_tokens": 120,
      "gen_ai.usage.output_tokens": 7,
      "gen_ai.usage.cache_read.input_tokens": 96,
      "gen_ai.usage.reasoning.output_tokens": 3,
      "gen_ai.response.time_to_first_chunk": 0.2505,
      "deltagate.stage.parse_ms": 0.1,
      "deltagate.stage.upstream_first_event_ms": 230.5,
      "deltagate.stage.commit_ms": 0.4,
      "deltagate.stage.edge_ms": 1.2,
      "deltagate.stage.total_ms": 400,
      "deltagate.chained": true,
      "deltagate.resend_matched_items": 11,
      "deltagate.upstream_input_items": 1,
      "deltagate.upstream_request_bytes": 321,
    });
    expect(span.attributes).not.toHaveProperty("error.type");
  });

  it("a refused or failed turn ends with error.type and an error status", () => {
    const { tracer, named } = recordingTracer(true);
    traceTurn(tracer, TURN, (trace) => trace.finish({ total: 1 }, {}, "rate_limit_exceeded"));
    const span = named("chat gpt-5.1")!;
    expect(span.attributes["error.type"]).toBe("rate_limit_exceeded");
    expect(span.status).toBe("error");
    expect(span.attributes).not.toHaveProperty("gen_ai.response.time_to_first_chunk");
  });
});

const OWNER = "ab".repeat(32);

/** A scripted upstream: one message, then `response.completed` with usage. */
function upstream(): Upstream {
  const item = { type: "message", id: "msg_up", role: "assistant", status: "completed", content: [] };
  const usage = {
    input_tokens: 50,
    output_tokens: 5,
    total_tokens: 55,
    input_tokens_details: { cached_tokens: 32 },
    output_tokens_details: { reasoning_tokens: 0 },
  };
  const rest: UpstreamEvent[] = [
    { type: "response.output_item.done", output_index: 0, item },
    { type: "response.completed", response: { id: "resp_up", status: "completed", output: [item], usage } },
  ];
  return {
    open: async () => ({
      first: {
        type: "response.output_item.added",
        output_index: 0,
        item: { ...item, status: "in_progress" },
      },
      rest: (async function* () {
        yield* rest;
      })(),
    }),
  };
}

/** A real engine over a no-op store, its upstream wrapped by the real timing stage. */
function engine(): TurnEngine {
  const store = {
    create: () => {},
    finish: () => {},
    appendEventLog: () => {},
    get: () => null,
    resendCandidates: () => [],
    eventLogs: { delete: () => {} },
  } as unknown as ConversationStore;
  return new Engine({
    store,
    history: () => EMPTY_CONTEXT,
    upstreamFor: async (prepared) => timingStage().wrap(upstream(), prepared),
    ownerId: OWNER,
    now: () => 1_000,
    keepaliveMs: 0,
    live: new LiveRegistry(),
    importRemote: async () => false,
    mayContinue: () => false,
    logFailure: () => {},
  });
}

const request = createRequest.parse({ model: "gpt-5.1", input: "hi", store: false });
const scope = { connId: "socket_1", tenant: "t" };
const sink = { send: () => {} };

describe("a sampled turn through the engine and the timing stage", () => {
  it("has its context, upstream first event and commit spans, ended, and the response's usage", async () => {
    const { tracer, spans, named } = recordingTracer(true);
    const timer = new TurnTimer();
    await traceTurn(tracer, TURN, async (trace) => {
      timer.trace = trace;
      await engine().run(request, scope, sink, new AbortController().signal, timer);
      timer.end();
      trace.finish(timer.stages(), timer.facts(), null);
    });
    expect(spans.map((span) => [span.name, span.ends])).toEqual([
      ["chat gpt-5.1", 1],
      ["deltagate.context", 1],
      ["deltagate.upstream_first_event", 1],
      ["deltagate.commit", 1],
    ]);
    const turn = named("chat gpt-5.1")!.attributes;
    expect(turn["gen_ai.response.id"]).toMatch(/^resp_/);
    expect(turn).toMatchObject({
      "deltagate.response.status": "completed",
      "gen_ai.usage.input_tokens": 50,
      "gen_ai.usage.output_tokens": 5,
      "gen_ai.usage.cache_read.input_tokens": 32,
      "deltagate.chained": false,
      "deltagate.resend_matched_items": 0,
    });
    expect(typeof turn["gen_ai.response.time_to_first_chunk"]).toBe("number");
    expect(typeof turn["deltagate.stage.commit_ms"]).toBe("number");
  });

  it("a warm-up (generate: false) names its response, with no upstream or commit span", async () => {
    const { tracer, spans, named } = recordingTracer(true);
    const warmUp = createRequest.parse({ model: "gpt-5.1", input: "hi", store: false, generate: false });
    await traceTurn(tracer, TURN, async (trace) => {
      const timer = new TurnTimer();
      timer.trace = trace;
      await engine().run(warmUp, scope, sink, new AbortController().signal, timer);
    });
    expect(spans.map((span) => span.name)).toEqual(["chat gpt-5.1", "deltagate.context"]);
    expect(named("chat gpt-5.1")?.attributes).toMatchObject({
      "deltagate.response.status": "completed",
      "gen_ai.usage.output_tokens": 0,
    });
    expect(named("chat gpt-5.1")?.attributes["gen_ai.response.id"]).toMatch(/^resp_/);
  });

  it("an unsampled turn (no trace on its timer) opens no span", async () => {
    const timer = new TurnTimer();
    const result = await engine().run(request, scope, sink, new AbortController().signal, timer);
    expect(result.failure).toBeNull();
    expect(timer.trace).toBeNull();
  });
});

describe("the safety stage's input check", () => {
  it("runs in a sampled turn's deltagate.safety span", async () => {
    const { tracer, spans } = recordingTracer(true);
    const inner = upstream();
    await traceTurn(tracer, TURN, async (trace) => {
      const checked = safeUpstream({
        inner,
        turn: {
          responseId: "resp_1",
          model: "m",
          previousResponseId: null,
          instructions: null,
          tools: null,
          moderation: null,
          history: [],
          input: [],
          trace,
        },
        plan: {
          policy: { ...DEFAULT_POLICY, mode: "blocking" },
          inputCheck: true,
          inputBlock: true,
          timing: "blocking",
          outputCheck: false,
          outputBlock: false,
          report: false,
          requestModel: null,
        },
        input: { id: "i", model: "m", local: true, combined: false, classify: async () => [] },
        output: null,
        cache: { store: () => {}, markChain: () => {} },
        checker: {
          check: async () => {
            expect(spans.at(-1)).toMatchObject({ name: "deltagate.safety", ends: 0 }); // open while checking
            return {
              verdict: { flagged: false, categories: {}, scores: {} },
              error: null,
              pending: [],
              accounting: {
                considered: 0,
                cacheHits: 0,
                skipped: 0,
                batchSize: 0,
                calls: 0,
                classifierMs: 0,
                checkMs: 0,
                historyChecked: false,
              },
            };
          },
        },
        log: "off",
      });
      const stream = await checked.open({} as UpstreamRequest, new AbortController().signal);
      for await (const _ of stream.rest);
    });
    expect(spans.map((span) => [span.name, span.ends])).toEqual([
      ["chat gpt-5.1", 0],
      ["deltagate.safety", 1],
    ]);
  });
});

describe("the HTTP transport", () => {
  function transport(tracer: Tracer, live = new LiveRegistry()) {
    const fake = {
      run: async (_request: unknown, _scope: unknown, out: { send: (event: unknown) => void }) => {
        out.send({ type: "response.completed", response: { id: "resp_1", status: "completed" } });
        return { responseId: "resp_1", failure: null };
      },
    } as unknown as TurnEngine;
    return new HttpTransport({
      engine: fake,
      store: { deleteConnectionScoped: () => {} } as unknown as ConversationStore,
      live,
      visibility: { retentionMs: 1, graceMs: 1 } as never,
      now: () => 0,
      track: () => {},
      turnLog: false,
      tracer,
      objectId: OWNER,
    });
  }
  const body = () => createRequest.parse({ model: "gpt-5.1", input: "hi" });
  const admitted: Admitted = { model: null, keyId: "env", reservation: null, release: () => {} };

  it("an unsampled turn asks the active span once and opens nothing", async () => {
    const { tracer, calls, spans } = recordingTracer(false);
    const response = await transport(tracer).create(body(), "t", {}, () => admitted);
    expect(response.status).toBe(200);
    expect(calls).toEqual(["getActiveSpan"]);
    expect(spans).toEqual([]);
  });

  it("a sampled turn is a chat span with its admission span, ended when the turn is", async () => {
    const { tracer, spans, named } = recordingTracer(true);
    await transport(tracer).create(body(), "t", {}, () => admitted);
    expect(spans.map((span) => [span.name, span.parent, span.ends])).toEqual([
      ["chat gpt-5.1", null, 1],
      ["deltagate.admission", "chat gpt-5.1", 1],
    ]);
    expect(named("chat gpt-5.1")!.attributes).toMatchObject({
      "deltagate.transport": "http",
      "gen_ai.request.stream": false,
      "gen_ai.conversation.id": OWNER,
    });
  });

  it("an admission that must wait for the tenant is inside the admission span", async () => {
    const { tracer, spans } = recordingTracer(true);
    let admissionOpen: number | undefined;
    const waited = async () => {
      admissionOpen = spans.find((span) => span.name === "deltagate.admission")?.ends;
      return admitted;
    };
    const response = await transport(tracer).create(body(), "t", {}, waited);
    expect(response.status).toBe(200);
    expect(admissionOpen).toBe(0);
    expect(spans.map((span) => [span.name, span.ends])).toEqual([
      ["chat gpt-5.1", 1],
      ["deltagate.admission", 1],
    ]);
  });

  it("a refused turn ends its span with error.type", async () => {
    const { tracer, named } = recordingTracer(true);
    const refusal = new ApiError(429, {
      type: "rate_limit_error",
      code: "max_turns_exceeded",
      message: "x",
      param: null,
    });
    await expect(transport(tracer).create(body(), "t", {}, () => refusal)).rejects.toBe(refusal);
    expect(named("chat gpt-5.1")).toMatchObject({
      ends: 1,
      status: "error",
      attributes: { "error.type": "max_turns_exceeded" },
    });
    expect(named("deltagate.admission")?.ends).toBe(1);
  });

  it("a request declined as too busy (affinity) ends its span with affinity_busy, unadmitted", async () => {
    const { tracer, named } = recordingTracer(true);
    const busy = { size: AFFINITY_MAX_RUNNING } as unknown as LiveRegistry; // as many running as it takes
    const http = transport(tracer, busy);
    let asked = false;
    const response = await http.create(body(), "t", { affinity: true }, () => {
      asked = true;
      return admitted;
    });
    expect(response.status).toBe(503);
    expect(asked).toBe(false);
    expect(named("chat gpt-5.1")).toMatchObject({ ends: 1, attributes: { "error.type": "affinity_busy" } });
  });
});

describe("the WebSocket transport", () => {
  function transport(tracer: Tracer, admit: () => AdmissionVerdict | Promise<AdmissionVerdict>) {
    const fake = {
      run: async (_request: unknown, _scope: unknown, out: { send: (event: unknown) => void }) => {
        out.send({ type: "response.completed", response: { id: "resp_1", status: "completed" } });
        return { responseId: "resp_1", failure: null };
      },
    } as unknown as TurnEngine;
    return new WebSocketTransport({
      engine: fake,
      store: {} as ConversationStore,
      live: new LiveRegistry(),
      maxConnectionMs: 3_600_000,
      redactor: new SecretRedactor([]),
      visibility: { retentionMs: 1, graceMs: 1 } as never,
      objectId: OWNER,
      now: () => 0,
      turnLog: false,
      admit,
      tracer,
    });
  }
  /** A socket that records the frames sent on it. */
  function connection() {
    const sent: Array<{ type: string; error?: { code?: string } }> = [];
    const ws = {
      send: (text: string) => sent.push(JSON.parse(text)),
      deserializeAttachment: () => null,
    } as unknown as WebSocket;
    const conn = new Connection(ws, { connId: "socket_1", tenant: "t", sessionId: "s", openedAt: 0 });
    return { conn, sent };
  }
  const frame = JSON.stringify({ type: "response.create", model: "gpt-5.1", input: "hi" });
  const admitted: Admitted = { model: null, keyId: "env", reservation: null, release: () => {} };

  it("an unsampled create asks the active span once and opens nothing", async () => {
    const { tracer, calls, spans } = recordingTracer(false);
    const { conn, sent } = connection();
    const runs: Promise<unknown>[] = [];
    transport(tracer, () => admitted).onMessage(conn, frame, (run) => runs.push(run));
    await Promise.all(runs);
    expect(sent.map((event) => event.type)).toEqual(["response.completed"]);
    expect(calls).toEqual(["getActiveSpan"]);
    expect(spans).toEqual([]);
  });

  it("a sampled create is a chat span with its admission span, ended after its terminal event", async () => {
    const { tracer, spans, named } = recordingTracer(true);
    const { conn } = connection();
    const runs: Promise<unknown>[] = [];
    transport(tracer, () => admitted).onMessage(conn, frame, (run) => runs.push(run));
    expect(named("chat gpt-5.1")?.ends).toBe(0); // open while the turn runs
    await Promise.all(runs);
    expect(spans.map((span) => [span.name, span.parent, span.ends])).toEqual([
      ["chat gpt-5.1", null, 1],
      ["deltagate.admission", "chat gpt-5.1", 1],
    ]);
    expect(named("chat gpt-5.1")?.attributes).toMatchObject({
      "deltagate.transport": "websocket",
      "gen_ai.request.stream": true,
      "deltagate.session": OWNER,
    });
  });

  it("a refused create (admission) ends its span with error.type; the error event still goes out", async () => {
    const { tracer, named } = recordingTracer(true);
    const { conn, sent } = connection();
    const refusal = new ApiError(429, {
      type: "rate_limit_error",
      code: "rate_limit_exceeded",
      message: "x",
      param: null,
    });
    // A verdict that waits for the tenant: the admission span stays open until it is in.
    transport(tracer, async () => refusal).onMessage(conn, frame, () => {});
    expect(named("deltagate.admission")?.ends).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(sent.map((event) => event.error?.code)).toEqual(["rate_limit_exceeded"]);
    expect(named("deltagate.admission")?.ends).toBe(1);
    expect(named("chat gpt-5.1")).toMatchObject({
      ends: 1,
      status: "error",
      attributes: { "error.type": "rate_limit_exceeded" },
    });
  });

  it("a create whose socket closed before its lane ran it ends its span as client_gone", async () => {
    const { tracer, named } = recordingTracer(true);
    const { conn } = connection();
    let admit!: (verdict: AdmissionVerdict) => void;
    const waiting = new Promise<AdmissionVerdict>((resolve) => {
      admit = resolve;
    });
    const runs: Promise<unknown>[] = [];
    transport(tracer, () => waiting).onMessage(conn, frame, (run) => runs.push(run));
    conn.closed.abort("closed");
    admit(admitted);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(runs).toEqual([]); // never ran
    expect(named("chat gpt-5.1")).toMatchObject({ ends: 1, attributes: { "error.type": "client_gone" } });
  });
});
