/**
 * How a turn's per-stage timing (src/pipeline/turn-timer.ts) reaches the outside. Owns the
 * opt-in and the three renderings:
 * - WebSocket: after each turn's terminal event, `{"type":"deltagate.timing","response_id",
 *   "stages":{…ms},"turn":{…facts}}` on sockets opened with `x-deltagate-timing: 1` (or `?timing=1`), and
 *   OpenAI's `{"type":"responsesapi.websocket_timing","timing_metrics":{…}}` on sockets opened
 *   with `x-responsesapi-include-timing-metrics: true` (the header and event Codex uses; field
 *   names as Codex reads them, openai/codex codex-rs/otel/src/events/session_telemetry.rs);
 * - HTTP (`POST /v1/responses` with either header): `Server-Timing` (and, for a stream, the
 *   stages known when its headers leave, then a `deltagate.timing` event after the terminal one);
 * - logs: one JSON line per turn (`console.log`, content-free), unless `TURN_LOG=0`.
 * The turn's facts (`TurnFacts`, issue #18.4: whether the client chained, how many items of a
 * full resend matched a held chain, what went upstream; issue #26.5: its tokens, cached and
 * cache-write ones apart, and its cost, as the ledger booked them) go with the stages in the
 * event, the SSE trailer and the log line.
 * Invariant: nothing is sent to a client that did not ask; nothing a client sent is logged.
 * Source: https://www.w3.org/TR/server-timing/
 */
import type { TimingReport, TurnFacts } from "./turn-timer.ts";

/** Which timing renderings a client asked for. */
export interface TimingOptIn {
  /** Deltagate's own event / `Server-Timing` (`x-deltagate-timing: 1`, `?timing=1`). */
  deltagate: boolean;
  /** OpenAI's `responsesapi.websocket_timing` event (`x-responsesapi-include-timing-metrics: true`). */
  openai: boolean;
}

/** Deltagate's opt-in header. */
export const TIMING_HEADER = "x-deltagate-timing";
/** OpenAI's opt-in header (sent by Codex on its WebSocket handshake). */
export const OPENAI_TIMING_HEADER = "x-responsesapi-include-timing-metrics";

const TRUE = new Set(["1", "true", "yes", "on"]);

/** The opt-in of a request (its headers, and for an upgrade its `timing` query parameter). */
export function timingOptIn(headers: Headers, url?: string): TimingOptIn {
  const query = url ? new URL(url).searchParams.get("timing") : null;
  const on = (value: string | null) => value !== null && TRUE.has(value.trim().toLowerCase());
  return {
    deltagate: on(headers.get(TIMING_HEADER)) || on(query),
    openai: on(headers.get(OPENAI_TIMING_HEADER)),
  };
}

/** True when either rendering was asked for. */
export function wantsTiming(optIn: TimingOptIn | undefined): boolean {
  return optIn !== undefined && (optIn.deltagate || optIn.openai);
}

/** The frames a socket that opted in gets after a turn's terminal event. */
export function timingFrames(
  optIn: TimingOptIn,
  responseId: string,
  stages: TimingReport,
  streamId: string | null | undefined,
  facts: TurnFacts = {},
): Array<Record<string, unknown>> {
  const lane = streamId ? { stream_id: streamId } : {};
  const frames: Array<Record<string, unknown>> = [];
  if (optIn.deltagate) frames.push(deltagateTiming(responseId, stages, facts, lane));
  if (optIn.openai) {
    frames.push({ type: "responsesapi.websocket_timing", timing_metrics: openAiMetrics(stages), ...lane });
  }
  return frames;
}

/**
 * OpenAI's timing metrics, from Deltagate's stages: the "engine" is the upstream (its connection,
 * its time to first event, its generation); the rest of the turn is Deltagate's overhead.
 */
function openAiMetrics(stages: TimingReport): Record<string, number> {
  const ttft = (stages.upstream_connect ?? 0) + (stages.upstream_first_event ?? 0);
  const engine = ttft + (stages.generation ?? 0);
  const round = (ms: number) => Math.round(ms * 100) / 100;
  return {
    responses_duration_excl_engine_and_client_tool_time_ms: round(Math.max(0, (stages.total ?? 0) - engine)),
    engine_service_total_ms: round(engine),
    engine_service_ttft_total_ms: round(ttft),
  };
}

/** Deltagate's timing event of a turn (WebSocket frame, SSE trailer). */
export function deltagateTiming(
  responseId: string,
  stages: TimingReport,
  facts: TurnFacts,
  extra: Record<string, unknown> = {},
): { type: string } & Record<string, unknown> {
  return { type: "deltagate.timing", response_id: responseId, stages, turn: facts, ...extra };
}

/** A `Server-Timing` header value (https://www.w3.org/TR/server-timing/): `name;dur=ms`, comma-separated. */
export function serverTiming(stages: TimingReport): string {
  return Object.entries(stages)
    .map(([name, ms]) => `${name};dur=${ms}`)
    .join(", ");
}

/** What one turn's log line says (never content, never a secret). */
export interface TurnLog {
  transport: "websocket" | "http";
  responseId: string | null;
  model: string;
  store: boolean;
  /** The request-level error code when the turn was refused, else null. */
  error: string | null;
  stages: TimingReport;
  /** What the turn was (TurnFacts): chained, resend matched, what went upstream. */
  facts?: TurnFacts;
}

/**
 * Writes one JSON line for a turn (Workers Logs / `wrangler tail` collect `console.log`), on the
 * next turn of the event loop: a socket's frames are written when the handler yields, so a line
 * logged at once would hold back the terminal event it follows by the cost of `console.log`
 * (measured, issue #27: docs/benchmarks.md, where Deltagate's cost over the floor goes).
 */
export function logTurn(entry: TurnLog): void {
  const line = {
    type: "deltagate.turn",
    transport: entry.transport,
    response_id: entry.responseId,
    model: entry.model,
    store: entry.store,
    error: entry.error,
    chained: entry.facts?.chained ?? false,
    resend_matched_items: entry.facts?.resend_matched_items ?? 0,
    upstream_input_items: entry.facts?.upstream_input_items ?? null,
    upstream_request_bytes: entry.facts?.upstream_request_bytes ?? null,
    input_tokens: entry.facts?.input_tokens ?? null,
    cached_tokens: entry.facts?.cached_tokens ?? null,
    cache_write_tokens: entry.facts?.cache_write_tokens ?? null,
    output_tokens: entry.facts?.output_tokens ?? null,
    cost_usd: entry.facts?.cost_usd ?? null,
    stages: entry.stages,
  };
  setTimeout(() => console.log(JSON.stringify(line)), 0);
}
