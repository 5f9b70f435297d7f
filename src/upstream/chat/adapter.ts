/**
 * Upstream adapter for OpenAI-compatible Chat Completions servers (vLLM, llama.cpp, Ollama,
 * Groq, OpenAI): `POST {base_url}/chat/completions` with `stream: true`, the full context
 * translated every turn (request.ts, messages.ts) and the chunk stream synthesized into
 * Responses events (stream.ts, synthesizer.ts). Owns the HTTP exchange; HTTP failures map to
 * `UpstreamError`s exactly as for the Responses HTTP adapter (shared `failureOf`).
 * Invariant: `open()` resolves only after the first chunk arrived (its first event is
 * `response.created`), so every failure before that rejects with an `UpstreamError`.
 * Source: https://platform.openai.com/docs/api-reference/chat/create.
 */
import type { TurnSettings } from "../../protocol/create-request.ts";
import { utf8Length } from "../../protocol/size-limits.ts";
import { randomToken } from "../../util/ids.ts";
import { type HttpUpstreamOptions, postStreaming } from "../http-client.ts";
import { capabilityRefusal } from "../route-capabilities.ts";
import { startTranslatedStream, synthesisMetaFor } from "../translated-stream.ts";
import type { Upstream, UpstreamError, UpstreamRequest, UpstreamStream } from "../upstream.ts";
import { toChatRequest } from "./request.ts";
import { chatStreamEvents } from "./stream.ts";
import { ChatEventSynthesizer } from "./synthesizer.ts";

/** Configuration of the Chat Completions adapter. */
export interface ChatCompletionsOptions extends HttpUpstreamOptions {
  /** Clock in ms (defaults to `Date.now`), for the synthesized `created_at`. */
  now?: () => number;
}

/** The Chat Completions upstream. Stateless: every turn sends the full context. */
export class ChatCompletionsUpstream implements Upstream {
  private readonly options: ChatCompletionsOptions;

  constructor(options: ChatCompletionsOptions) {
    this.options = options;
  }

  /** The 400 for a setting or tool type Chat Completions cannot serve (route-capabilities.ts). */
  refusal(settings: Partial<TurnSettings>): UpstreamError | null {
    return capabilityRefusal("chat-completions", settings);
  }

  /** @inheritdoc */
  async open(request: UpstreamRequest, signal: AbortSignal): Promise<UpstreamStream> {
    const chat = toChatRequest(request);
    const body = JSON.stringify(chat);
    request.onSent?.({ items: chat.messages.length, bytes: utf8Length(body) });
    const response = await postStreaming(this.options, "/chat/completions", body, signal);
    request.onConnected?.(); // per-stage timing (src/pipeline/timing-stage.ts)
    const meta = synthesisMetaFor("chat", request, randomToken(16), this.options.now);
    const events = chatStreamEvents(response.body, new ChatEventSynthesizer(meta), signal);
    // chatStreamEvents already maps every failure to an UpstreamError (or the abort itself).
    return startTranslatedStream(events);
  }
}
