/**
 * Upstream adapter for Anthropic's Messages API (`api: "anthropic-messages"`, docs/anthropic.md):
 * `POST {base_url}/messages` with `stream: true`, the key in `x-api-key` and the
 * `anthropic-version` header; the full context translated every turn (request.ts, messages.ts,
 * with automatic cache breakpoints, cache-breakpoints.ts) and the event stream synthesized into
 * Responses events (stream.ts, synthesizer.ts); failures mapped by errors.ts, so the retry and
 * fallback rules of src/upstream/fallback.ts apply as to every route.
 * Invariant: `open()` resolves only after the first event (`response.created`, from
 * `message_start`), so every failure before that rejects with an `UpstreamError`; every reasoning
 * item it streams is marked with its origin (encrypted-reasoning.ts), so Claude's thinking blocks
 * never go to another upstream.
 * Source: https://docs.anthropic.com/en/api/messages, https://docs.anthropic.com/en/api/versioning.
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
import { DEFAULT_CACHE_MIN_TOKENS } from "./cache-breakpoints.ts";
import { anthropicFailure } from "./errors.ts";
import { type CacheSettings, toAnthropicRequest } from "./request.ts";
import { anthropicStreamEvents } from "./stream.ts";
import { AnthropicEventSynthesizer } from "./synthesizer.ts";

/** The API version Deltagate speaks (the Messages API as documented since 2023-06-01). */
export const ANTHROPIC_VERSION = "2023-06-01";

/** Configuration of the Anthropic adapter. */
export interface AnthropicOptions extends HttpUpstreamOptions {
  /** Prompt-cache breakpoints (default: on, 1,024-token minimum). */
  cache?: CacheSettings;
  /** Clock in ms (defaults to `Date.now`), for the synthesized `created_at`. */
  now?: () => number;
  /** Leave OpenAI-hosted tools out rather than refusing the turn (the route's `hosted_tools: "omit"`). */
  omitHostedTools?: boolean;
}

/** The Anthropic Messages upstream. Stateless: every turn sends the full context. */
export class AnthropicMessagesUpstream implements Upstream {
  private readonly options: AnthropicOptions;
  private readonly http: HttpUpstreamOptions;

  constructor(options: AnthropicOptions) {
    this.options = options;
    this.http = {
      ...options,
      keyHeader: "x-api-key",
      headers: { ...options.headers, "anthropic-version": ANTHROPIC_VERSION },
    };
  }

  /**
   * The 400 for a setting or tool type this route cannot honour (route-capabilities.ts, then
   * request.ts), checked before the turn starts.
   */
  refusal(settings: Partial<TurnSettings>): UpstreamError | null {
    const omit = this.options.omitHostedTools === true;
    return translatedRefusal(
      "anthropic-messages",
      settings,
      (probe) => toAnthropicRequest(probe, this.options.baseUrl, { breakpoints: false, minTokens: 0 }, omit),
      omit ? HOSTED_TOOL_TYPES : undefined,
    );
  }

  /** @inheritdoc */
  async open(request: UpstreamRequest, signal: AbortSignal): Promise<UpstreamStream> {
    const cache = this.options.cache ?? { breakpoints: true, minTokens: DEFAULT_CACHE_MIN_TOKENS };
    const messages = toAnthropicRequest(
      request,
      this.options.baseUrl,
      cache,
      this.options.omitHostedTools === true,
    );
    const body = JSON.stringify(messages);
    request.onSent?.({ items: request.input.length, bytes: utf8Length(body) });
    const response = await postStreaming(this.http, "/messages", body, signal, anthropicFailure);
    request.onConnected?.(); // per-stage timing (src/pipeline/timing-stage.ts)
    const meta = synthesisMetaFor("claude", request, randomToken(16), this.options.now);
    const events = anthropicStreamEvents(response.body, new AnthropicEventSynthesizer(meta), signal);
    return markStreamOrigin(await startTranslatedStream(events), this.options.baseUrl);
  }
}
