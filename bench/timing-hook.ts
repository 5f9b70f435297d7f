/**
 * The benchmark's side of Deltagate's per-stage timing (issue #8 item 8): how the bench asks for
 * it and how it reads what comes back. Deltagate builds without the feature send nothing; then
 * every turn's `timing` stays null and the report says "not reported".
 * Expected shape (documented in bench/README.md "Per-stage timing"):
 * - opt-in: the request header `x-responsesapi-include-timing-metrics: true` (the header Codex sends
 *   with its runtime-metrics feature) on the WebSocket upgrade and on every HTTP request;
 * - WebSocket and SSE: after each terminal event, one event
 *   `{"type":"deltagate.timing","response_id":"resp_…","stages":{"<stage>":<ms>,…}}`;
 * - HTTP: a `Server-Timing` response header, `<stage>;dur=<ms>` entries (RFC-style list,
 *   https://www.w3.org/TR/server-timing/), for the stages known before the body starts.
 * Invariant: parsing never throws; anything malformed is ignored (a benchmark must not fail on a
 * diagnostic it only records).
 */

/** The request header that asks for timing (Codex's name for OpenAI's timing metrics). */
export const TIMING_OPT_IN_HEADER = "x-responsesapi-include-timing-metrics";
/** The event type of a per-stage timing event (WebSocket and SSE). */
export const TIMING_EVENT_TYPE = "deltagate.timing";

/** Stage name → milliseconds. */
export type StageTimings = Record<string, number>;

function numericFields(value: unknown, skip: ReadonlySet<string>): StageTimings | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const out: StageTimings = {};
  for (const [key, v] of Object.entries(value)) {
    if (!skip.has(key) && typeof v === "number" && Number.isFinite(v)) out[key] = v;
  }
  return Object.keys(out).length > 0 ? out : null;
}

const NOT_STAGES = new Set(["sequence_number"]);

/**
 * Reads a `deltagate.timing` event: its `stages` object (or, if absent, its numeric top-level
 * fields). Returns null for any other event.
 */
export function timingFromEvent(event: unknown): { responseId: string | null; stages: StageTimings } | null {
  if (typeof event !== "object" || event === null) return null;
  const record = event as Record<string, unknown>;
  if (record.type !== TIMING_EVENT_TYPE) return null;
  const stages = numericFields(record.stages, NOT_STAGES) ?? numericFields(record, NOT_STAGES);
  if (!stages) return null;
  return { responseId: typeof record.response_id === "string" ? record.response_id : null, stages };
}

/** Parses a `Server-Timing` header (`name;dur=1.2;desc="…", name2;dur=3`); null when absent/empty. */
export function parseServerTiming(header: string | null | undefined): StageTimings | null {
  if (!header) return null;
  const out: StageTimings = {};
  for (const entry of header.split(",")) {
    const [rawName, ...params] = entry.split(";").map((s) => s.trim());
    if (!rawName) continue;
    for (const param of params) {
      const [key, value] = param.split("=").map((s) => s.trim());
      if (key?.toLowerCase() !== "dur" || value === undefined) continue;
      const ms = Number(value.replace(/^"|"$/g, ""));
      if (Number.isFinite(ms)) out[rawName] = ms;
    }
  }
  return Object.keys(out).length > 0 ? out : null;
}

/** `b`'s stages over `a`'s (either may be null). */
export function mergeTimings(a: StageTimings | null, b: StageTimings | null): StageTimings | null {
  if (!a) return b;
  if (!b) return a;
  return { ...a, ...b };
}
