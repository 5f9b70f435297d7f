/**
 * Upstream adapter for an OpenAI-compatible Responses endpoint over HTTP + SSE
 * (`POST {UPSTREAM_BASE_URL}/responses` with `stream: true`, `store: false`): the full context is
 * sent every turn. Owns the mapping of upstream HTTP failures to client-safe `UpstreamError`s.
 * Source: https://platform.openai.com/docs/api-reference/responses/create (streaming), brief §5.
 */
import { z } from "zod";
import { adjacentToolOutputs } from "../engine/tool-pairing.ts";
import type { Item } from "../protocol/items.ts";
import { retryAfterMs } from "./retry-after.ts";
import { parseSse } from "./sse.ts";
import {
  type Upstream,
  UpstreamError,
  type UpstreamEvent,
  type UpstreamRequest,
  type UpstreamStream,
} from "./upstream.ts";

const errorEnvelope = z.looseObject({
  error: z.looseObject({ message: z.string().optional(), code: z.string().nullish() }).optional(),
});
const eventShape = z.looseObject({ type: z.string() });

/** Removes Deltagate's item ids before items go upstream (the upstream never saw them). */
export function toUpstreamItem(item: Item): Item {
  if (item.type === "reasoning") return item; // reasoning ids are the upstream's own (not re-keyed)
  const { id: _id, ...rest } = item;
  return rest as Item;
}

/**
 * Redacts anything that looks like a bearer token from an upstream message and caps it at 500
 * characters. Shared by every HTTP adapter (Chat Completions too).
 */
export function redact(message: string): string {
  return message.replace(/\b(sk|key|dg)[-_][A-Za-z0-9_-]{6,}/g, "[redacted]").slice(0, 500);
}

/** Configuration of the HTTP adapter. */
export interface ResponsesHttpOptions extends HttpUpstreamOptions {
  /**
   * The upstream stores responses: chained turns go as the delta plus the upstream's own
   * `previous_response_id` (`store: true` upstream). Default false: the full context every turn.
   */
  upstreamStore?: boolean;
}

/** Upstream ids remembered per adapter (stored mode): enough for recent chains and forks. */
const MAX_REMEMBERED = 64;

/** What the upstream holds for one of Deltagate's responses (stored mode). */
interface UpstreamNode {
  /** The upstream's response id. */
  upstreamId: string;
  /** Items of context the upstream has for it (its input context + its output). */
  itemCount: number;
}

/** The Responses-over-HTTP/SSE upstream. */
export class ResponsesHttpUpstream implements Upstream {
  private readonly options: ResponsesHttpOptions;

  constructor(options: ResponsesHttpOptions) {
    this.options = options;
  }

  /** Deltagate response id → upstream response id, in stored mode (in memory, recent first out). */
  private readonly nodes = new Map<string, UpstreamNode>();

  /**
   * @inheritdoc
   * In stored mode a chained turn whose parent this adapter sent (and whose upstream context is
   * exactly this turn's history — not truncated, not another fork) goes as the delta with the
   * upstream's `previous_response_id`; anything else, and a `previous_response_not_found` from the
   * upstream, goes as the full context.
   */
  async open(request: UpstreamRequest, signal: AbortSignal): Promise<UpstreamStream> {
    const parent = request.previousResponseId ? this.nodes.get(request.previousResponseId) : undefined;
    const historyLength = request.input.length - request.newInput.length;
    if (this.options.upstreamStore && parent && parent.itemCount === historyLength) {
      try {
        return await this.send(request, signal, parent.upstreamId);
      } catch (cause) {
        if (!(cause instanceof UpstreamError && cause.code === "previous_response_not_found")) throw cause;
        this.nodes.delete(request.previousResponseId ?? "");
      }
    }
    return this.send(request, signal, null);
  }

  private async send(
    request: UpstreamRequest,
    signal: AbortSignal,
    previous: string | null,
  ): Promise<UpstreamStream> {
    const stored = this.options.upstreamStore === true;
    const body = JSON.stringify({
      ...request.settings,
      // Keep the upstream's prefix cache hot for this session unless the client chose a key.
      prompt_cache_key: request.settings.prompt_cache_key ?? request.sessionKey,
      model: request.model,
      input: adjacentToolOutputs(previous ? request.newInput : request.input).map(toUpstreamItem),
      ...(previous ? { previous_response_id: previous } : {}),
      stream: true,
      store: stored,
    });
    const response = await postStreaming(this.options, "/responses", body, signal);
    let events = this.events(response.body, signal);
    if (stored) events = this.remember(events, request.responseId, request.input.length);
    const first = await events.next().catch((cause: unknown) => {
      throw asUpstreamError(cause, signal);
    });
    if (first.done) {
      throw new UpstreamError(
        502,
        "upstream_error",
        "The upstream closed the stream before sending any event.",
      );
    }
    if (first.value.type === "error") throw streamError(first.value);
    return { first: first.value, rest: { [Symbol.asyncIterator]: () => events } };
  }

  /** Passes events through and, on `response.completed`, remembers the upstream's id. */
  private async *remember(
    events: AsyncGenerator<UpstreamEvent>,
    responseId: string,
    contextLength: number,
  ): AsyncGenerator<UpstreamEvent> {
    for await (const event of events) {
      if (event.type === "response.completed") {
        const response = event.response as { id?: unknown; output?: unknown } | undefined;
        if (typeof response?.id === "string" && Array.isArray(response.output)) {
          this.nodes.set(responseId, {
            upstreamId: response.id,
            itemCount: contextLength + response.output.length,
          });
          if (this.nodes.size > MAX_REMEMBERED) this.nodes.delete(this.nodes.keys().next().value ?? "");
        }
      }
      yield event;
    }
  }

  private async *events(
    body: ReadableStream<Uint8Array>,
    signal: AbortSignal,
  ): AsyncGenerator<UpstreamEvent> {
    try {
      for await (const sse of parseSse(body, signal)) {
        if (sse.data === "[DONE]") return;
        let value: unknown;
        try {
          value = JSON.parse(sse.data);
        } catch {
          throw new UpstreamError(502, "upstream_error", "The upstream sent an event that is not JSON.");
        }
        const parsed = eventShape.safeParse(value);
        if (!parsed.success)
          throw new UpstreamError(502, "upstream_error", "The upstream sent an event without a type.");
        yield parsed.data as UpstreamEvent;
      }
    } catch (cause) {
      throw asUpstreamError(cause, signal);
    }
  }
}

/**
 * Maps a failure while reading an upstream stream: `UpstreamError`s and aborts pass through,
 * anything else (network loss, decoder errors) becomes a 502 "lost mid-stream" `UpstreamError`.
 * Shared by every HTTP adapter.
 */
export function asUpstreamError(cause: unknown, signal: AbortSignal): unknown {
  if (cause instanceof UpstreamError || signal.aborted) return cause;
  return new UpstreamError(502, "upstream_error", "The upstream connection was lost mid-stream.");
}

function streamError(event: UpstreamEvent): UpstreamError {
  const message = typeof event.message === "string" ? event.message : "The upstream reported an error.";
  const code = typeof event.code === "string" ? event.code : "upstream_error";
  return new UpstreamError(500, code, redact(message));
}

/**
 * Maps a non-2xx (or bodiless) upstream HTTP response to a client-safe `UpstreamError`:
 * 401/403 → 502 `upstream_auth_failed`; 429 → 429 `rate_limit_error`; 5xx → same status;
 * other 4xx → same status; the OpenAI error envelope's message/code are kept (redacted).
 * Shared by every HTTP adapter (Chat Completions too).
 */
export async function failureOf(response: Response): Promise<UpstreamError> {
  const text = await response.text().catch(() => "");
  let message = `The upstream answered HTTP ${response.status}.`;
  let code: string | null = null;
  try {
    const parsed = errorEnvelope.safeParse(JSON.parse(text));
    if (parsed.success && parsed.data.error) {
      if (parsed.data.error.message) message = redact(parsed.data.error.message);
      code = parsed.data.error.code ?? null;
    }
  } catch {
    // not JSON: keep the generic message
  }
  return upstreamErrorForStatus(response.status, code, message, retryAfterMs(response.headers));
}

/**
 * The `UpstreamError` for an upstream failure status (an HTTP status, or the `status` of a
 * WebSocket error frame, brief §1.5). `message` must already be redacted; `retryAfter` (ms, from
 * `retryAfterMs`) is kept on 429/5xx errors for the retry logic (src/upstream/fallback.ts).
 * Shared by every adapter (the Responses WebSocket one maps its error frames with it).
 */
export function upstreamErrorForStatus(
  status: number,
  code: string | null,
  message: string,
  retryAfter: number | null = null,
): UpstreamError {
  if (status === 401 || status === 403) {
    return new UpstreamError(
      502,
      "upstream_auth_failed",
      "The upstream rejected Deltagate's credentials.",
      "server_error",
    );
  }
  if (status === 429)
    return new UpstreamError(429, code ?? "rate_limit_exceeded", message, "rate_limit_error", retryAfter);
  if (status >= 500)
    return new UpstreamError(status, code ?? "upstream_error", message, "server_error", retryAfter);
  return new UpstreamError(status >= 400 ? status : 502, code ?? "upstream_error", message);
}

/** Connection settings shared by the HTTP adapters. */
export interface HttpUpstreamOptions {
  /** Base URL including `/v1`, no trailing slash. */
  baseUrl: string;
  /** Bearer token, or null. */
  apiKey: string | null;
  /** `fetch` to use (defaults to the global). */
  fetch?: typeof fetch;
}

/**
 * POSTs a JSON body to `{baseUrl}{path}` asking for an SSE stream.
 * @returns the 2xx response, whose body is present.
 * @throws {UpstreamError} 502 `upstream_unavailable` when the upstream cannot be reached, or the
 *   mapped error of a non-2xx answer (`failureOf`); the abort itself when `signal` fired.
 */
export async function postStreaming(
  options: HttpUpstreamOptions,
  path: string,
  body: string,
  signal: AbortSignal,
): Promise<Response & { body: ReadableStream<Uint8Array> }> {
  const headers: Record<string, string> = { "content-type": "application/json", accept: "text/event-stream" };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(`${options.baseUrl}${path}`, {
      method: "POST",
      headers,
      body,
      signal,
    });
  } catch (cause) {
    signal.throwIfAborted();
    throw new UpstreamError(
      502,
      "upstream_unavailable",
      `Could not reach the upstream model server (${String(cause)}).`,
    );
  }
  if (!response.ok || !response.body) throw await failureOf(response);
  return response as Response & { body: ReadableStream<Uint8Array> };
}
