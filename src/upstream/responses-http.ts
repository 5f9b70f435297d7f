/**
 * Upstream adapter for an OpenAI-compatible Responses endpoint over HTTP + SSE
 * (`POST {UPSTREAM_BASE_URL}/responses` with `stream: true`, `store: false`): the full context is
 * sent every turn, or, with `upstreamStore`, chained turns as the delta plus the upstream's own
 * `previous_response_id`. Owns that choice and the memory of upstream ids it needs. The HTTP
 * exchange, error mapping, item conversion and encrypted reasoning are the upstream toolkit's
 * (http-client.ts, error-mapping.ts, item-conversion.ts, encrypted-reasoning.ts).
 * Source: https://platform.openai.com/docs/api-reference/responses/create (streaming).
 */
import { z } from "zod";
import { utf8Length } from "../protocol/size-limits.ts";
import { adjacentToolOutputs } from "../protocol/tool-calls.ts";
import {
  addsEncryptedInclude,
  isIncludeRefusal,
  markStreamOrigin,
  rememberRefusal,
  upstreamInclude,
} from "./encrypted-reasoning.ts";
import { asUpstreamError } from "./error-mapping.ts";
import { type HttpUpstreamOptions, postStreaming } from "./http-client.ts";
import { toUpstreamItems } from "./item-conversion.ts";
import { parseSse } from "./sse.ts";
import {
  type Upstream,
  UpstreamError,
  type UpstreamEvent,
  type UpstreamRequest,
  type UpstreamStream,
} from "./upstream.ts";

const eventShape = z.looseObject({ type: z.string() });

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

  /**
   * Sends the request, asking for encrypted reasoning (encrypted-reasoning.ts); a model that
   * refuses the added `include` gets the request again without it, once.
   */
  private async send(
    request: UpstreamRequest,
    signal: AbortSignal,
    previous: string | null,
  ): Promise<UpstreamStream> {
    const { baseUrl } = this.options;
    const include = request.settings.include ?? undefined;
    if (!addsEncryptedInclude(baseUrl, request.model, include, true)) {
      return this.post(request, signal, previous, false);
    }
    try {
      return await this.post(request, signal, previous, true);
    } catch (cause) {
      if (!isIncludeRefusal(cause)) throw cause;
      const stream = await this.post(request, signal, previous, false);
      rememberRefusal(baseUrl, request.model);
      return stream;
    }
  }

  private async post(
    request: UpstreamRequest,
    signal: AbortSignal,
    previous: string | null,
    addInclude: boolean,
  ): Promise<UpstreamStream> {
    const stored = this.options.upstreamStore === true;
    const include = upstreamInclude(request.settings.include ?? undefined, addInclude);
    const items = adjacentToolOutputs(previous ? request.newInput : request.input);
    const body = JSON.stringify({
      ...request.settings,
      ...(include ? { include } : {}),
      // Keep the upstream's prefix cache hot for this session unless the client chose a key.
      prompt_cache_key: request.settings.prompt_cache_key ?? request.sessionKey,
      model: request.model,
      input: [
        ...toUpstreamItems(items, { origin: this.options.baseUrl, resolvesIds: stored }),
        ...(request.compactionTrigger ? [{ type: "compaction_trigger" }] : []),
      ],
      ...(previous ? { previous_response_id: previous } : {}),
      stream: true,
      store: stored,
    });
    request.onSent?.({ items: items.length, bytes: utf8Length(body) });
    const response = await postStreaming(this.options, "/responses", body, signal);
    request.onConnected?.(); // per-stage timing (src/pipeline/timing-stage.ts)
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
    const stream = { first: first.value, rest: { [Symbol.asyncIterator]: () => events } };
    return markStreamOrigin(stream, this.options.baseUrl);
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

function streamError(event: UpstreamEvent): UpstreamError {
  const message = typeof event.message === "string" ? event.message : "The upstream reported an error.";
  const code = typeof event.code === "string" ? event.code : "upstream_error";
  return new UpstreamError(500, code, message);
}
