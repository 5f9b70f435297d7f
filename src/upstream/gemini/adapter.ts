/**
 * Upstream adapter for the Gemini API (`api: "gemini"`, docs/gemini.md):
 * `POST {base_url}/models/{model}:streamGenerateContent?alt=sse` with the key in
 * `x-goog-api-key`; the full context translated every turn (request.ts, contents.ts, with each
 * part's thought signature restored from the reasoning items that carry it, thought-signatures.ts)
 * and the chunk stream synthesized into Responses events (stream.ts, synthesizer.ts); failures
 * mapped by errors.ts, so the retry and fallback rules of src/upstream/fallback.ts apply as to
 * every route.
 * Invariant: `open()` resolves only after the first event (`response.created`, from the first
 * chunk), so every failure before that rejects with an `UpstreamError`; every reasoning item it
 * streams is marked with its origin (encrypted-reasoning.ts), so Gemini's signatures never go to
 * another upstream.
 * Source: https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent,
 * https://ai.google.dev/gemini-api/docs/api-key (the `x-goog-api-key` header).
 */
import type { TurnSettings } from "../../protocol/create-request.ts";
import { utf8Length } from "../../protocol/size-limits.ts";
import { randomToken } from "../../util/ids.ts";
import { markStreamOrigin } from "../encrypted-reasoning.ts";
import { type HttpUpstreamOptions, postStreaming } from "../http-client.ts";
import { capabilityRefusal } from "../route-capabilities.ts";
import { type Upstream, UpstreamError, type UpstreamRequest, type UpstreamStream } from "../upstream.ts";
import { geminiFailure } from "./errors.ts";
import { toGeminiRequest } from "./request.ts";
import { geminiStreamEvents } from "./stream.ts";
import { GeminiEventSynthesizer } from "./synthesizer.ts";

/** Configuration of the Gemini adapter. */
export interface GeminiOptions extends HttpUpstreamOptions {
  /** Clock in ms (defaults to `Date.now`), for the synthesized `created_at`. */
  now?: () => number;
}

/** The path of a model's streaming method (a `models/` prefix in the id is accepted). */
export function streamPath(model: string): string {
  const id = model.startsWith("models/") ? model.slice("models/".length) : model;
  return `/models/${encodeURIComponent(id)}:streamGenerateContent?alt=sse`;
}

/** The Gemini upstream. Stateless: every turn sends the full context. */
export class GeminiUpstream implements Upstream {
  private readonly options: GeminiOptions;
  private readonly http: HttpUpstreamOptions;

  constructor(options: GeminiOptions) {
    this.options = options;
    this.http = { ...options, keyHeader: "x-goog-api-key" };
  }

  /**
   * The 400 for a setting this route cannot honour (route-capabilities.ts, then request.ts), checked
   * before the turn starts.
   */
  refusal(settings: Partial<TurnSettings>): UpstreamError | null {
    const common = capabilityRefusal("gemini", settings);
    if (common) return common;
    const probe = {
      model: "",
      input: [],
      newInput: [],
      previousResponseId: null,
      responseId: "",
      settings,
      sessionKey: "",
    };
    try {
      toGeminiRequest(probe, this.options.baseUrl);
      return null;
    } catch (cause) {
      return cause instanceof UpstreamError ? cause : null;
    }
  }

  /** @inheritdoc */
  async open(request: UpstreamRequest, signal: AbortSignal): Promise<UpstreamStream> {
    const body = JSON.stringify(toGeminiRequest(request, this.options.baseUrl));
    request.onSent?.({ items: request.input.length, bytes: utf8Length(body) });
    const response = await postStreaming(this.http, streamPath(request.model), body, signal, geminiFailure);
    request.onConnected?.(); // per-stage timing (src/pipeline/timing-stage.ts)
    const synthesizer = new GeminiEventSynthesizer({
      id: `resp_gemini_${randomToken(16)}`,
      model: request.model,
      createdAt: Math.floor((this.options.now ?? Date.now)() / 1000),
      settings: request.settings,
    });
    const events = geminiStreamEvents(response.body, synthesizer, signal);
    const first = await events.next();
    if (first.done) {
      throw new UpstreamError(502, "upstream_error", "The upstream closed the stream before any event.");
    }
    return markStreamOrigin(
      { first: first.value, rest: { [Symbol.asyncIterator]: () => events } },
      this.options.baseUrl,
    );
  }
}
