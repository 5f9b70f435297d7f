/**
 * The redaction stage: the one path every string an upstream sends back takes before the engine
 * sees it. Outermost of the stages, so it wraps every adapter (Responses HTTP, Responses
 * WebSocket, Chat Completions, any future one) and every inner stage: an `UpstreamError` from
 * `open()` (a request-level error) or from the stream (a mid-stream failure), an `error` event,
 * and the `error` / `incomplete_details` of a terminal event (`response.failed`,
 * `response.incomplete`) are redacted by `SecretRedactor` (src/secrets/redactor.ts) — configured
 * secrets by value and known key shapes. Model output (text, reasoning, tool calls, stored items,
 * deltas split anywhere) has configured secret values redacted (output-redaction.ts). Everything
 * the engine derives from them (the client's events or HTTP error, the stored response, its event
 * log) is therefore clean.
 * Invariant: no `UpstreamError` message, and no error field of an upstream event, reaches the
 * engine unredacted; upstream error messages are capped at `MAX_UPSTREAM_MESSAGE` characters and
 * error objects at `MAX_UPSTREAM_ERROR_JSON` (after redaction, so a cap never cuts a key in two and
 * leaves a prefix behind), so a hostile upstream cannot make a stored error outgrow its row.
 */
import { isRecord } from "../protocol/json.ts";
import type { SecretRedactor } from "../secrets/redactor.ts";
import { decorateUpstream } from "../upstream/decorate.ts";
import {
  type Upstream,
  UpstreamError,
  type UpstreamEvent,
  type UpstreamStream,
} from "../upstream/upstream.ts";
import { OutputRedaction } from "./output-redaction.ts";
import type { TurnStage } from "./stage.ts";

/** Longest upstream error message relayed, in UTF-16 code units. */
export const MAX_UPSTREAM_MESSAGE = 500;
/** Longest upstream error object (`error` event, `response.error`, `incomplete_details`) kept, as JSON. */
export const MAX_UPSTREAM_ERROR_JSON = 8 * 1024;

/** The redaction stage; list it last in `createTurnPipeline` (outermost). */
export function redactionStage(redactor: SecretRedactor): TurnStage {
  return { name: "redaction", wrap: (inner) => redactedUpstream(inner, redactor) };
}

/** `inner` with every error it reports redacted. */
export function redactedUpstream(inner: Upstream, redactor: SecretRedactor): Upstream {
  return decorateUpstream(inner, {
    open: async (request, signal) => {
      let stream: UpstreamStream;
      try {
        stream = await inner.open(request, signal);
      } catch (cause) {
        throw redactedError(cause, redactor);
      }
      return redactedStream(stream, redactor);
    },
  });
}

function redactedStream(stream: UpstreamStream, redactor: SecretRedactor): UpstreamStream {
  const output = new OutputRedaction(redactor);
  // The first event holds nothing back and releases nothing (nothing is held yet): one event.
  const [first = stream.first] = output.events(stream.first);
  return {
    ...stream, // optional members (the usage stage's `usage` counter) pass through
    first: redactedEvent(first, redactor),
    rest: redactedRest(stream.rest, output, redactor),
  };
}

/**
 * `source` with each event through `output` (which may put a held delta's release before it) and
 * `redactedEvent`; an error of the source redacted. One promise turn per upstream event, as
 * `mapEvents` (src/upstream/map-events.ts); `return()` is forwarded to the source.
 */
function redactedRest(
  source: AsyncIterable<UpstreamEvent>,
  output: OutputRedaction,
  redactor: SecretRedactor,
): AsyncIterable<UpstreamEvent> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<UpstreamEvent> {
      const inner = source[Symbol.asyncIterator]();
      const queued: UpstreamEvent[] = [];
      const failed = (cause: unknown): never => {
        throw redactedError(cause, redactor);
      };
      const mapped = (result: IteratorResult<UpstreamEvent>): IteratorResult<UpstreamEvent> => {
        if (result.done) return { done: true, value: undefined };
        const events = output.events(result.value);
        for (let i = 1; i < events.length; i++) queued.push(redactedEvent(events[i]!, redactor));
        return { done: false, value: redactedEvent(events[0]!, redactor) };
      };
      return {
        next: () => {
          const next = queued.shift();
          return next !== undefined
            ? Promise.resolve({ done: false, value: next })
            : inner.next().then(mapped, failed);
        },
        return: async (): Promise<IteratorResult<UpstreamEvent>> => {
          await inner.return?.();
          return { done: true, value: undefined };
        },
      };
    },
  };
}

/** An `UpstreamError` with its message, code, type and param redacted; anything else as is (aborts). */
function redactedError(cause: unknown, redactor: SecretRedactor): unknown {
  if (!(cause instanceof UpstreamError)) return cause;
  return new UpstreamError(
    cause.status,
    redactor.text(cause.code),
    redactor.text(cause.message).slice(0, MAX_UPSTREAM_MESSAGE),
    redactor.text(cause.type),
    cause.retryAfterMs,
    cause.param === null ? null : redactor.text(cause.param),
  );
}

/**
 * An `error` event redacted whole (its flat `message`/`code` or nested `error` object); a
 * terminal event with its response's `error` and `incomplete_details` redacted. Other events
 * (model output) are returned unchanged.
 */
function redactedEvent(event: UpstreamEvent, redactor: SecretRedactor): UpstreamEvent {
  if (event.type === "error") return { ...bounded(redactor.json(event)), type: "error" };
  const response = event.response;
  if (!isRecord(response)) return event;
  if (!("error" in response) && !("incomplete_details" in response)) return event;
  const { error, incomplete_details, ...rest } = response;
  return {
    ...event,
    response: {
      ...rest,
      ...(error === undefined ? {} : { error: bounded(redactor.json(error)) }),
      ...(incomplete_details === undefined
        ? {}
        : { incomplete_details: bounded(redactor.json(incomplete_details)) }),
    },
  };
}

/**
 * A redacted error object as is when its JSON is at most `MAX_UPSTREAM_ERROR_JSON`, else only its
 * `code` and `message` (or `reason`), each cut to `MAX_UPSTREAM_MESSAGE`.
 */
function bounded<T>(value: T): T {
  if (typeof value !== "object" || value === null) return value;
  if (JSON.stringify(value).length <= MAX_UPSTREAM_ERROR_JSON) return value;
  const fields = value as Record<string, unknown>;
  const kept: Record<string, string> = {};
  for (const name of ["type", "code", "message", "reason"]) {
    const field = fields[name];
    if (typeof field === "string") kept[name] = field.slice(0, MAX_UPSTREAM_MESSAGE);
  }
  return kept as T;
}
