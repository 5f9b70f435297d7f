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
import { translatedRefusal } from "../route-capabilities.ts";
import { HOSTED_TOOL_TYPES } from "../tool-namespaces.ts";
import { startTranslatedStream, synthesisMetaFor } from "../translated-stream.ts";
import type { Upstream, UpstreamError, UpstreamRequest, UpstreamStream } from "../upstream.ts";
import { geminiFailure } from "./errors.ts";
import { toGeminiRequest } from "./request.ts";
import { geminiStreamEvents } from "./stream.ts";
import { GeminiEventSynthesizer } from "./synthesizer.ts";

/** Configuration of the Gemini adapter. */
export interface GeminiOptions extends HttpUpstreamOptions {
  /** Clock in ms (defaults to `Date.now`), for the synthesized `created_at`. */
  now?: () => number;
  /** Leave OpenAI-hosted tools out rather than refusing the turn (the route's `hosted_tools: "omit"`). */
  omitHostedTools?: boolean;
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
    const omit = this.options.omitHostedTools === true;
    return translatedRefusal(
      "gemini",
      settings,
      (probe) => toGeminiRequest(probe, this.options.baseUrl, omit),
      omit ? HOSTED_TOOL_TYPES : undefined,
    );
  }

  /** @inheritdoc */
  async open(request: UpstreamRequest, signal: AbortSignal): Promise<UpstreamStream> {
    const body = JSON.stringify(
      toGeminiRequest(request, this.options.baseUrl, this.options.omitHostedTools === true),
    );
    request.onSent?.({ items: request.input.length, bytes: utf8Length(body) });
    const response = await postStreaming(this.http, streamPath(request.model), body, signal, geminiFailure);
    request.onConnected?.(); // per-stage timing (src/pipeline/timing-stage.ts)
    const meta = synthesisMetaFor("gemini", request, randomToken(16), this.options.now);
    const events = geminiStreamEvents(response.body, new GeminiEventSynthesizer(meta), signal);
    return markStreamOrigin(await startTranslatedStream(events), this.options.baseUrl);
  }
}
