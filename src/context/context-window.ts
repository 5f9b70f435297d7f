/**
 * The context window of a session's turns. Owns the render cache (cached histories with sizes),
 * `truncation`, and the usage fallback, behind three calls:
 * - `history(parent)`: what a turn continues from (the engine's "prepare context" step);
 * - `fit(upstream, turn)`: the context-window stage (src/pipeline/): applies `truncation`, throws
 *   `context_length_exceeded` before anything is sent, records the turn in the render cache;
 * - `withUsage(upstream, turn)`: the usage stage: fills a usage the upstream did not give.
 * Counting is lazy: a context whose upper bound (UTF-8 bytes, item-tokens.ts) fits the window is
 * sent without loading the tokenizer (loading it costs a few hundred ms of CPU once per isolate);
 * only a context that may not fit, or a usage the upstream did not give, is counted exactly, and
 * then only the items never counted before. The bound is the tighter of Deltagate's own (every
 * count made so far, the byte bound of the rest) and the upstream's report of the history (the
 * previous response's usage, `reportedHistoryTokens` in usage.ts) plus the new input's bound: a
 * long chain is not counted on every turn once its byte bound outgrew the window (a counting pass
 * over a long history takes tens of ms), only when it may really not fit.
 * Invariants: each item is tokenized at most once (counts live on the item rows and in memory);
 * when `auto` truncation drops items, the upstream request is a fresh chain
 * (`previousResponseId: null`), so a stateful upstream (Responses WebSocket mode) re-sends the
 * kept context instead of appending the delta to a state that still holds the dropped items.
 * Source: https://platform.openai.com/docs/api-reference/responses/create (`truncation`).
 */
import type { CreateRequest } from "../protocol/create-request.ts";
import type { ConversationStore } from "../store/conversation-store.ts";
import { decorateUpstream } from "../upstream/decorate.ts";
import { DEFAULT_CONTEXT_WINDOW } from "../upstream/routes.ts";
import type { Upstream, UpstreamRequest } from "../upstream/upstream.ts";
import {
  type CountedContext,
  countItems,
  currentBound,
  EMPTY_CONTEXT,
  type TurnContext,
} from "./counted-context.ts";
import { SettingsTokenMemo } from "./item-tokens.ts";
import { RenderCache } from "./render-cache.ts";
import { loadTokenizer } from "./tokenizer.ts";
import { fitStart } from "./truncation.ts";
import { type ExactCounts, withUsageFallback } from "./usage.ts";

/** What the context window needs to know about a turn. */
export interface WindowTurn {
  /** The id this turn's response gets. */
  readonly responseId: string;
  /** The turn's context before fitting. */
  readonly context: TurnContext;
  /** The request's window-relevant settings. */
  readonly request: Pick<CreateRequest, "instructions" | "tools" | "truncation" | "max_output_tokens">;
}

/** The context window manager of one session. */
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
   *   nothing was dropped).
   * @throws {ApiError} 400 `context_length_exceeded` (param `input`) when the context does not fit.
   */
  async fit(upstream: Upstream, turn: WindowTurn): Promise<Upstream> {
    const { instructions, tools } = turn.request;
    const context = turn.context.all;
    const room = (upstream.contextWindow ?? DEFAULT_CONTEXT_WINDOW) - (turn.request.max_output_tokens ?? 0);
    let start = 0;
    // Counted exactly only when even the tightest bound known now may not fit: Deltagate's own
    // (exact counts so far, byte bounds of the rest), or the history's size as the upstream
    // reported it plus the new input's bound.
    const reported = turn.context.reportedHistory;
    const known = Math.min(
      currentBound(context.counted),
      reported === null ? Number.POSITIVE_INFINITY : reported + currentBound(turn.context.input),
    );
    if (known + this.settings.tokens(instructions, tools) > room) {
      const count = await loadTokenizer();
      countItems(context.counted, count, this.store);
      const tokens = context.counted.map((c) => c.tokens ?? c.bound);
      const budget = room - this.settings.tokens(instructions, tools, count);
      start = fitStart(
        context.items,
        tokens,
        turn.context.history.items.length,
        budget,
        turn.request.truncation ?? "disabled",
      );
    }
    this.cache.remember(turn.responseId, context);
    if (start === 0) return upstream;
    const kept = context.items.slice(start);
    // Only the kept part of the context is sent, as a fresh chain.
    return decorateUpstream(upstream, {
      request: (request) => ({ ...request, input: kept, previousResponseId: null }),
    });
  }

  /**
   * Wraps `upstream` so the terminal event of every stream it opens carries a usage: the
   * upstream's own, else Deltagate's count of what was sent (the last `request.input.length`
   * items of the turn's context: fitting only ever drops a prefix) and of the output.
   */
  withUsage(upstream: Upstream, turn: WindowTurn): Upstream {
    const { instructions, tools } = turn.request;
    const counted = turn.context.all.counted;
    const exact = (request: UpstreamRequest) => async (): Promise<ExactCounts> => {
      const count = await loadTokenizer();
      const sent = counted.slice(counted.length - request.input.length);
      const items = countItems(sent, count, this.store);
      return { count, inputTokens: items + this.settings.tokens(instructions, tools, count) };
    };
    return decorateUpstream(upstream, {
      open: async (request, signal) =>
        withUsageFallback(await upstream.open(request, signal), exact(request)),
    });
  }
}
