/**
 * The context window of a turn: the one entry point the turn engine calls between building the
 * context and opening the upstream. Owns the composition of the render cache (cached history with
 * sizes), `truncation`, and the usage fallback.
 * Flow: `history(parent)` → (engine validates pairing) → `fit(upstream, turn)` → an upstream that
 * sends what fits and fills a missing usage. `fit` throws `context_length_exceeded` before
 * anything is sent.
 * Counting is lazy: a context whose upper bound (UTF-8 bytes, item-tokens.ts) fits the window is
 * sent without loading the tokenizer (loading it costs a few hundred ms of CPU once per isolate);
 * only a context that may not fit, or a usage the upstream did not give, is counted exactly, and
 * then only the items never counted before.
 * Invariants: each item is tokenized at most once (counts live on the item rows and in memory);
 * when `auto` truncation drops items, the upstream request is a fresh chain
 * (`previousResponseId: null`), so a stateful upstream (Responses WebSocket mode) re-sends the
 * kept context instead of appending the delta to a state that still holds the dropped items.
 * Source: issue #4 §2, brief §4.4.
 */
import type { CreateRequest } from "../protocol/create-request.ts";
import type { StoredItem } from "../protocol/items.ts";
import type { ConversationStore } from "../store/conversation-store.ts";
import { DEFAULT_CONTEXT_WINDOW } from "../upstream/routes.ts";
import type { Upstream, UpstreamRequest, UpstreamStream } from "../upstream/upstream.ts";
import {
  appendCounted,
  type CountedContext,
  type CountedItem,
  countItems,
  EMPTY_CONTEXT,
} from "./counted-context.ts";
import { rememberedTokens, SettingsTokenMemo, tokenBound, utf8Length } from "./item-tokens.ts";
import { RenderCache } from "./render-cache.ts";
import { loadTokenizer } from "./tokenizer.ts";
import { fitStart } from "./truncation.ts";
import { type ExactCounts, withUsageFallback } from "./usage.ts";

/** What `fit` needs to know about the turn. */
export interface TurnContext {
  /** The id this turn's response gets. */
  responseId: string;
  /** history(previous response), from `history()`. */
  history: CountedContext;
  /** The turn's own input items, ids assigned (the objects the store will insert). */
  input: readonly StoredItem[];
  /** The request's window-relevant settings. */
  request: Pick<CreateRequest, "instructions" | "tools" | "truncation" | "max_output_tokens">;
}

/** The context window manager of one session (one per turn engine). */
export class ContextWindow {
  private readonly store: ConversationStore;
  private readonly cache: RenderCache;
  private readonly settings = new SettingsTokenMemo();

  /** @param store the session's conversation store. */
  constructor(store: ConversationStore) {
    this.store = store;
    this.cache = new RenderCache(store);
  }

  /**
   * history(parentId) with sizes (empty for a new chain), from the render cache or SQLite.
   * The caller has validated that the parent exists, is visible to it and is finished.
   */
  history(parentId: string | null): CountedContext {
    return parentId === null ? EMPTY_CONTEXT : this.cache.history(parentId);
  }

  /**
   * Applies `truncation` against the upstream's context window (minus instructions, tools and
   * `max_output_tokens`), records the turn's context in the render cache, and wraps `upstream`.
   * @returns an upstream whose `open`/`prewarm` send the kept context (the request unchanged when
   *   nothing was dropped) and whose terminal event always carries a usage.
   * @throws {ApiError} 400 `context_length_exceeded` (param `input`) when the context does not fit.
   */
  async fit(upstream: Upstream, turn: TurnContext): Promise<Upstream> {
    const { instructions, tools } = turn.request;
    const input: CountedItem[] = turn.input.map((item, position) => ({
      item,
      key: { responseId: turn.responseId, kind: "input", position },
      tokens: rememberedTokens(item),
      bound: tokenBound(item, utf8Length(JSON.stringify(item))),
    }));
    const context = appendCounted(turn.history, input);
    const room = (upstream.contextWindow ?? DEFAULT_CONTEXT_WINDOW) - (turn.request.max_output_tokens ?? 0);
    let start = 0;
    if (context.bound + this.settings.tokens(instructions, tools) > room) {
      const count = await loadTokenizer();
      countItems(context.counted, count, this.store);
      const tokens = context.counted.map((c) => c.tokens ?? c.bound);
      const budget = room - this.settings.tokens(instructions, tools, count);
      start = fitStart(
        context.items,
        tokens,
        turn.history.items.length,
        budget,
        turn.request.truncation ?? "disabled",
      );
    }
    this.cache.remember(turn.responseId, context);
    const sent = context.counted.slice(start);
    const exact = async (): Promise<ExactCounts> => {
      const count = await loadTokenizer();
      const items = countItems(sent, count, this.store);
      return { count, inputTokens: items + this.settings.tokens(instructions, tools, count) };
    };
    return new WindowedUpstream(upstream, start === 0 ? null : context.items.slice(start), exact);
  }
}

/** An upstream that sends the fitted context and fills a missing usage. */
class WindowedUpstream implements Upstream {
  private readonly inner: Upstream;
  private readonly kept: readonly StoredItem[] | null;
  private readonly exact: () => Promise<ExactCounts>;

  constructor(inner: Upstream, kept: readonly StoredItem[] | null, exact: () => Promise<ExactCounts>) {
    this.inner = inner;
    this.kept = kept;
    this.exact = exact;
  }

  get contextWindow(): number | undefined {
    return this.inner.contextWindow;
  }

  private fitted(request: UpstreamRequest): UpstreamRequest {
    return this.kept ? { ...request, input: this.kept, previousResponseId: null } : request;
  }

  async open(request: UpstreamRequest, signal: AbortSignal): Promise<UpstreamStream> {
    return await withUsageFallback(await this.inner.open(this.fitted(request), signal), this.exact);
  }

  prewarm(request: UpstreamRequest): void {
    this.inner.prewarm?.(this.fitted(request));
  }
}
