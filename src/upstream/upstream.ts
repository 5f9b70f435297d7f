/**
 * The upstream inference interface every adapter implements, and its error type.
 * Owns the contract between the turn engine and an adapter:
 * - `open()` resolves once the upstream accepted the request and produced its first event, or
 *   rejects with `UpstreamError` (so "failed before the first event" is unambiguous);
 * - the returned stream yields Responses stream events in the upstream's own ids and sequence
 *   numbers (the engine re-keys them), and throws `UpstreamError` if it breaks mid-stream.
 */
import type { TurnSettings } from "../protocol/create-request.ts";
import type { StoredItem } from "../protocol/items.ts";
import type { Json } from "../protocol/json.ts";

/** A Responses stream event as received from upstream: a JSON object with a `type`. */
export interface UpstreamEvent {
  type: string;
  [field: string]: Json | undefined;
}

/** What the engine asks an upstream for: the full model context, the delta, and the settings. */
export interface UpstreamRequest {
  model: string;
  /** Full context, oldest first: history(previous response) + `newInput`. Items carry Deltagate ids. */
  input: readonly StoredItem[];
  /** This turn's own input items (the delta a stateful upstream needs). */
  newInput: readonly StoredItem[];
  /** Deltagate id of the response this turn continues, or null for a new chain. */
  previousResponseId: string | null;
  /** Deltagate id this turn's response gets (known before the upstream is called). */
  responseId: string;
  /** Settings forwarded by wire name (instructions, tools, tool_choice, text …). */
  settings: Partial<TurnSettings>;
  /** Stable per-session key (the default `prompt_cache_key`). */
  sessionKey: string;
  /**
   * Optional: the client ended its input with `compaction_trigger` and the route compacts
   * upstream (src/compaction/): a Responses adapter appends `{"type":"compaction_trigger"}` to the
   * input it sends. The trigger is never among `input`/`newInput` (it is not stored).
   */
  compactionTrigger?: boolean;
  /**
   * Optional: called by the adapter when its connection to the upstream is ready (HTTP: the
   * response headers arrived; WebSocket mode: the socket is open, at once when warm), before the
   * first event; again on a retry. Per-stage timing (src/pipeline/timing-stage.ts) listens.
   */
  onConnected?: () => void;
  /**
   * Optional: called by the adapter each time it sends the request upstream (again on a retry or a
   * full-context resend), with the input items it carried and the UTF-8 bytes of the body or
   * frame. Per-turn reporting (src/pipeline/timing-stage.ts) listens.
   */
  onSent?: (sent: UpstreamSent) => void;
}

/** What one upstream send carried. */
export interface UpstreamSent {
  items: number;
  bytes: number;
}

/** An opened upstream stream: its first event, then the rest. */
export interface UpstreamStream {
  first: UpstreamEvent;
  rest: AsyncIterable<UpstreamEvent>;
  /**
   * Optional: Deltagate's own count of the turn's usage with `output` as its output so far, for a
   * response the upstream stopped reporting on (failed mid-stream, cancelled). Added by the usage
   * stage (src/context/usage.ts); a stage that wraps the stream forwards it.
   */
  usage?(output: readonly StoredItem[]): Promise<Json>;
}

/** An adapter to one kind of upstream. */
export interface Upstream {
  /** Optional: the model's context window in tokens (routes set it; src/context enforces it). */
  readonly contextWindow?: number | undefined;
  /**
   * Starts a turn.
   * @param signal aborting it cancels the upstream request.
   * @throws {UpstreamError} when the upstream fails before its first event.
   */
  open(request: UpstreamRequest, signal: AbortSignal): Promise<UpstreamStream>;
  /**
   * Optional: the first setting this upstream cannot honour, as the 400 to answer, or null.
   * Called before the turn is accepted (src/pipeline/pipeline.ts), so a setting an upstream would
   * have to drop is refused as a request error, with nothing stored. Must not throw.
   */
  refusal?(settings: Partial<TurnSettings>): UpstreamError | null;
  /**
   * Optional: a `generate:false` warm-up arrived (instructions and tools known, no output wanted).
   * Adapters with connection state (Responses WebSocket mode) may prepare the upstream; the call
   * must not block or throw. `request.responseId` is the warm-up response's id.
   */
  prewarm?(request: UpstreamRequest): void;
  /**
   * Optional: a client socket of the session just opened. Adapters with a connection of their own
   * (Responses WebSocket mode) open it now, sending nothing, so the first turn pays no connection
   * setup. Must not block or throw: the promise resolves once the connection is open or failed,
   * and never rejects.
   */
  preconnect?(): Promise<void>;
  /**
   * Optional: the session will not start another turn on this upstream (the credential it was
   * built with changed: src/upstream/router.ts). Adapters with a connection of their own close it
   * as soon as the turns already queued on it are done. Must not block or throw.
   */
  dispose?(): void;
}

/**
 * An upstream failure, with the status Deltagate reports for it. Its message may quote the
 * upstream: the redaction stage (src/pipeline/redaction-stage.ts) redacts it before it goes on.
 */
export class UpstreamError extends Error {
  readonly status: number;
  readonly code: string;
  readonly type: string;
  /** How long the upstream asked to wait before a retry (`Retry-After`), in ms, or null. */
  readonly retryAfterMs: number | null;
  /** The request parameter the upstream blamed (its error's `param`), or null. */
  readonly param: string | null;

  /**
   * @param status HTTP status to report (the upstream's own for 4xx/429/5xx; 502 when unreachable).
   * @param code OpenAI-style error code (`upstream_error`, `rate_limit_exceeded`, …).
   * @param message shown to the client after redaction (never interpolate a configured key).
   * @param retryAfterMs the upstream's `Retry-After`, in ms (src/upstream/retry-after.ts), or null.
   * @param param the upstream error's `param`, or null.
   */
  constructor(
    status: number,
    code: string,
    message: string,
    type = status >= 500 ? "server_error" : "invalid_request_error",
    retryAfterMs: number | null = null,
    param: string | null = null,
  ) {
    super(message);
    this.name = "UpstreamError";
    this.status = status;
    this.code = code;
    this.type = type;
    this.retryAfterMs = retryAfterMs;
    this.param = param;
  }
}
