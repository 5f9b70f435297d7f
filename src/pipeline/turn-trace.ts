/**
 * OpenTelemetry traces of a turn (issue #27.5), through the Workers runtime's own tracing API
 * (`tracing` from `cloudflare:workers`,
 * https://developers.cloudflare.com/workers/observability/traces/custom-spans/; `startActiveSpan`
 * and `span.end()` since the 2026-07-28 runtime, `getActiveSpan` and `startSpan` since 2026-09-25,
 * `setStatus` since 2026-10-26: https://developers.cloudflare.com/changelog/), exported by
 * wrangler's `[observability.traces]` configuration (docs/observability.md "Tracing"). Owns the
 * span names and attributes of a turn:
 * - one span per turn, `chat {model}`, with the GenAI semantic conventions' attributes
 *   (https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/, now maintained in
 *   https://github.com/open-telemetry/semantic-conventions-genai): `gen_ai.operation.name`,
 *   `gen_ai.provider.name` (`genAiProvider`: the wire API of the model's first route),
 *   `gen_ai.request.model`, `gen_ai.request.stream`,
 *   `gen_ai.conversation.id`, `gen_ai.response.id`, `gen_ai.usage.*`,
 *   `gen_ai.response.time_to_first_chunk` (seconds), `error.type`; and Deltagate's own
 *   (`deltagate.*`: session, transport, store, chained, resend matched items, what went upstream,
 *   each stage's measured ms from the turn's `TurnTimer`);
 * - a child span per stage, opened and ended around the code it names (the runtime gives a span
 *   no explicit start or end time): `deltagate.admission`, `deltagate.context`,
 *   `deltagate.safety`, `deltagate.upstream_first_event`, `deltagate.commit`.
 * Invariant: a turn that is not sampled costs one `getActiveSpan()` and one boolean (`sampled`)
 * and nothing else — no span, no attribute, no allocation per event; a runtime without `tracing`
 * (an older compatibility date) costs one null check (`tracerOf`, detected once per isolate).
 * Caveat: in production the clock advances only across I/O, so a CPU-bound stage span (context,
 * commit) reads 0 ms there (https://developers.cloudflare.com/workers/observability/traces/known-limitations/).
 */
import type { UpstreamApi } from "../upstream/routes.ts";
import type { SpanStage, TimingReport, TurnFacts, TurnSpans, TurnTimer } from "./turn-timer.ts";

/** What a turn uses of the runtime's `Span`. */
export interface TraceSpan {
  /** False when the invocation is not sampled (`head_sampling_rate`): the span records nothing. */
  readonly isTraced: boolean;
  setAttribute(key: string, value: string | number | boolean): unknown;
  /** Present from the runtime's 2026-10-26 API on (optional: feature-detected at the call). */
  setStatus?(status: { code: "unset" | "ok" | "error"; message?: string }): unknown;
  end(): void;
}

/** What a turn uses of the runtime's `tracing` (the `Tracing` interface of @cloudflare/workers-types). */
export interface Tracer {
  /** The active span: outside any custom span, the invocation's root span. */
  getActiveSpan(): TraceSpan | undefined;
  /** Starts a span, active within `callback` (and its async continuations); ended by `end()`. */
  startActiveSpan<T>(name: string, callback: (span: TraceSpan) => T): T;
  /** Starts a span, a child of the active one, that is not made active. */
  startSpan(name: string): TraceSpan;
}

/** The span name of each stage. */
export const STAGE_SPAN_NAMES: Readonly<Record<SpanStage, string>> = {
  admission: "deltagate.admission",
  context: "deltagate.context",
  safety: "deltagate.safety",
  upstream_first_event: "deltagate.upstream_first_event",
  commit: "deltagate.commit",
};

/**
 * The runtime's tracer from the `cloudflare:workers` module namespace, or null when it has none
 * (or not the calls a turn makes). Call once per isolate.
 */
export function tracerOf(workers: unknown): Tracer | null {
  const tracing = (workers as { tracing?: unknown } | null)?.tracing as Partial<Tracer> | undefined;
  if (
    typeof tracing?.getActiveSpan !== "function" ||
    typeof tracing.startActiveSpan !== "function" ||
    typeof tracing.startSpan !== "function"
  ) {
    return null;
  }
  return tracing as Tracer;
}

/** True when the current invocation is sampled (its active span is traced). */
export function sampled(tracer: Tracer | null | undefined): tracer is Tracer {
  return tracer != null && tracer.getActiveSpan()?.isTraced === true;
}

/**
 * `gen_ai.provider.name` for a route's wire API: the conventions' well-known value of the API's
 * telemetry flavour (`anthropic`, `gcp.gemini`), and `openai` for the Responses and Chat
 * Completions APIs, whoever serves them (the conventions' note: a provider reached through the
 * OpenAI API may host another's models). Unknown (no route serves the model): `openai`.
 */
export function genAiProvider(api: UpstreamApi | null | undefined): string {
  if (api === "anthropic-messages") return "anthropic";
  if (api === "gemini") return "gcp.gemini";
  return "openai";
}

/** What a turn's span says of its request, known when it starts. */
export interface TracedTurn {
  transport: "websocket" | "http";
  /** The session (its Durable Object id). */
  session: string;
  /** The model as the client named it (an alias before its admission resolves it). */
  model: string;
  /** `gen_ai.provider.name` of a model (`genAiProvider` of its first route's API). */
  provider(model: string): string;
  store: boolean;
  /** Whether the response streams to the client (always over WebSocket). */
  stream: boolean;
}

/**
 * Runs `work` inside the turn's span (active for everything `work` starts, so the runtime's own
 * spans of the turn — the upstream's fetch or socket — nest under it). Call only when `sampled`.
 * The span stays open after `work` returns, until `TurnTrace.finish`.
 */
export function traceTurn<T>(tracer: Tracer, turn: TracedTurn, work: (trace: TurnTrace) => T): T {
  return tracer.startActiveSpan(`chat ${turn.model}`, (span) => work(new TurnTrace(tracer, span, turn)));
}

/**
 * Ends a sampled turn's span for a create that never ran (refused at its admission, or its socket
 * gone before its lane ran it), with `error` as its `error.type`; nothing when not sampled.
 */
export function traceRefused(timer: TurnTimer, error: string): void {
  const trace = timer.trace;
  if (trace === null) return;
  timer.end();
  trace.finish(timer.stages(), timer.facts(), error);
}

/** The trace of one sampled turn: its span, its stages' spans, its attributes at the end. */
export class TurnTrace implements TurnSpans {
  private readonly tracer: Tracer;
  private readonly span: TraceSpan;
  private readonly turn: TracedTurn;
  private finished = false;

  constructor(tracer: Tracer, span: TraceSpan, turn: TracedTurn) {
    this.tracer = tracer;
    this.span = span;
    this.turn = turn;
    span.setAttribute("gen_ai.operation.name", "chat");
    span.setAttribute("gen_ai.provider.name", turn.provider(turn.model));
    span.setAttribute("gen_ai.request.model", turn.model);
    span.setAttribute("gen_ai.request.stream", turn.stream);
    span.setAttribute("gen_ai.conversation.id", turn.session);
    span.setAttribute("deltagate.session", turn.session);
    span.setAttribute("deltagate.transport", turn.transport);
    span.setAttribute("deltagate.store", turn.store);
  }

  /** Opens the span of `stage` (a child of the active span: the turn's); end it with `end()`. */
  start(stage: SpanStage): { end(): void } {
    return this.tracer.startSpan(STAGE_SPAN_NAMES[stage]);
  }

  /**
   * The model its admission settled on: when an alias resolved to another model, that model
   * (`deltagate.model`) and its provider.
   */
  admitted(model: string): void {
    if (model === this.turn.model) return;
    this.span.setAttribute("deltagate.model", model);
    this.span.setAttribute("gen_ai.provider.name", this.turn.provider(model));
  }

  /** The response the turn produced and its usage (at its commit). */
  response(id: string, status: string, usage: unknown): void {
    const span = this.span;
    span.setAttribute("gen_ai.response.id", id);
    span.setAttribute("deltagate.response.status", status);
    if (typeof usage !== "object" || usage === null) return;
    const u = usage as Record<string, unknown>;
    setNumber(span, "gen_ai.usage.input_tokens", u.input_tokens);
    setNumber(span, "gen_ai.usage.output_tokens", u.output_tokens);
    setNumber(span, "gen_ai.usage.cache_read.input_tokens", detail(u.input_tokens_details, "cached_tokens"));
    setNumber(
      span,
      "gen_ai.usage.reasoning.output_tokens",
      detail(u.output_tokens_details, "reasoning_tokens"),
    );
  }

  /**
   * Ends the turn's span with its measured stages, its facts and, when it was refused or failed,
   * the error code. Later calls change nothing.
   */
  finish(stages: TimingReport, facts: TurnFacts, error: string | null): void {
    if (this.finished) return;
    this.finished = true;
    const span = this.span;
    if (stages.upstream_first_event !== undefined) {
      // From the request sent upstream (its connection included) to its first event, in seconds.
      const ms = (stages.upstream_connect ?? 0) + stages.upstream_first_event;
      span.setAttribute("gen_ai.response.time_to_first_chunk", Math.round(ms * 10) / 10_000);
    }
    for (const [stage, ms] of Object.entries(stages)) span.setAttribute(`deltagate.stage.${stage}_ms`, ms);
    span.setAttribute("deltagate.chained", facts.chained ?? false);
    span.setAttribute("deltagate.resend_matched_items", facts.resend_matched_items ?? 0);
    setNumber(span, "deltagate.upstream_input_items", facts.upstream_input_items);
    setNumber(span, "deltagate.upstream_request_bytes", facts.upstream_request_bytes);
    if (error !== null) {
      span.setAttribute("error.type", error);
      span.setStatus?.({ code: "error", message: error });
    }
    span.end();
  }
}

function setNumber(span: TraceSpan, key: string, value: unknown): void {
  if (typeof value === "number" && Number.isFinite(value)) span.setAttribute(key, value);
}

function detail(details: unknown, key: string): unknown {
  return typeof details === "object" && details !== null
    ? (details as Record<string, unknown>)[key]
    : undefined;
}
