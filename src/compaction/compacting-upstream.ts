/**
 * A turn's upstream with compaction (the compaction stage, src/pipeline/compaction-stage.ts).
 * Owns what a turn does about compaction, by who compacts on its route (`compaction` route
 * setting, src/upstream/routes.ts):
 * - always: Deltagate's own compaction items in the context are sent as their summary (a user
 *   message, compaction-items.ts), so a compacted chain continues on any upstream and transport;
 * - `upstream`: a `compaction_trigger` and `context_management` are passed through (the adapter
 *   appends the trigger item; the upstream returns its own compaction item);
 * - `deltagate`, `compaction_trigger`: the route's model is asked for a summary (summarizer.ts)
 *   and the response's output is exactly one `compaction` item whose `encrypted_content` is the
 *   sealed summary (compaction-token.ts) — the shape Codex's remote compaction expects;
 * - `deltagate`, `context_management: [{type:"compaction", compact_threshold}]`: when the context
 *   reaches the threshold (tokens: the upstream's own count of the history when the previous
 *   response reported one, else Deltagate's count), the history is summarized first and the
 *   model answers from the summary plus the turn's input; the output starts with the compaction
 *   item (output index 0), then the model's items.
 * A compaction item Deltagate produces is marked as a response output (`ORIGIN_FIELD` =
 * `deltagate`), so later turns of the chain start their context at it.
 */
import { itemTokens } from "../context/item-tokens.ts";
import { loadTokenizer } from "../context/tokenizer.ts";
import type { StoredItem } from "../protocol/items.ts";
import { isRecord, type Json } from "../protocol/json.ts";
import { decorateUpstream } from "../upstream/decorate.ts";
import { ORIGIN_FIELD } from "../upstream/encrypted-reasoning.ts";
import { mapEvents } from "../upstream/map-events.ts";
import type { ExtensionMode } from "../upstream/routes.ts";
import type { Upstream, UpstreamEvent, UpstreamRequest, UpstreamStream } from "../upstream/upstream.ts";
import { newItemId } from "../util/ids.ts";
import { DELTAGATE_ORIGIN, expandedSummary } from "./compaction-items.ts";
import { expandCompactions, type OpenedCompactions } from "./compaction-keyring.ts";
import { type CompactionKeys, sealToken } from "./compaction-token.ts";
import { summarize, summaryInput } from "./summarizer.ts";

/** What the compacting upstream knows of its turn. */
export interface CompactionPlan {
  /** Who compacts on the turn's route. */
  mode: ExtensionMode;
  /** The tenant the turn's compaction items are sealed for. */
  tenant: string;
  keys: CompactionKeys;
  /** The context's Deltagate compaction items, opened. */
  opened: OpenedCompactions;
  /** The client model id (recorded in the sealed payload). */
  model: string;
  /**
   * The turn's `context_management` threshold in tokens when the context must be counted to know
   * whether it reaches it, else null.
   */
  threshold: number | null;
  /** The context is known to reach the threshold (the upstream's own count of the history). */
  compactNow: boolean;
  /** The turn's `context_management` as the client sent it (passed through on an `upstream` route). */
  contextManagement: Json | null;
}

/** A `compaction` output item Deltagate issued, marked as a response output (as JSON: it is an event's). */
type OutputItem = { id: string; [field: string]: Json };

async function compactionItem(summary: string, plan: CompactionPlan, now: number): Promise<OutputItem> {
  const payload = {
    v: 1 as const,
    summary,
    model: plan.model,
    created_at: Math.floor(now / 1000),
    window: true,
  };
  return {
    id: newItemId("compaction"),
    type: "compaction",
    encrypted_content: await sealToken(payload, plan.tenant, plan.keys),
    [ORIGIN_FIELD]: DELTAGATE_ORIGIN,
  };
}

async function* eventsOf(events: readonly UpstreamEvent[]): AsyncGenerator<UpstreamEvent> {
  for (const event of events) yield event;
}

/** A sum of two usages (both Responses `usage` objects), or whichever exists. */
function addUsage(a: Json | null | undefined, b: Json | null | undefined): Json | null {
  const objA = isRecord(a) ? (a as { [k: string]: Json }) : null;
  const objB = isRecord(b) ? (b as { [k: string]: Json }) : null;
  if (!objA || !objB) return objA ?? objB;
  const num = (o: { [k: string]: Json }, k: string) => (typeof o[k] === "number" ? o[k] : 0);
  const input = num(objA, "input_tokens") + num(objB, "input_tokens");
  const output = num(objA, "output_tokens") + num(objB, "output_tokens");
  return { ...objB, input_tokens: input, output_tokens: output, total_tokens: input + output };
}

/**
 * The upstream of a turn, with compaction: `inner` decorated (src/upstream/decorate.ts) with the
 * expansion of the request (for `open` and `prewarm` alike) and the compaction of `open`.
 */
export function compactingUpstream(inner: Upstream, plan: CompactionPlan): Upstream {
  const compaction = new Compaction(inner, plan);
  return decorateUpstream(inner, {
    request: (request) => compaction.expanded(request),
    open: (request, signal) => compaction.open(request, signal),
  });
}

/** What the compacting upstream does with a turn. */
class Compaction {
  private readonly inner: Upstream;
  private readonly plan: CompactionPlan;

  constructor(inner: Upstream, plan: CompactionPlan) {
    this.inner = inner;
    this.plan = plan;
  }

  /** `request` with Deltagate's compaction items expanded (and, upstream, `context_management`). */
  expanded(request: UpstreamRequest): UpstreamRequest {
    const { opened, mode, contextManagement } = this.plan;
    const settings =
      mode === "upstream" && contextManagement !== null
        ? { ...request.settings, context_management: contextManagement }
        : request.settings;
    if (opened.size === 0 && settings === request.settings) return request;
    return {
      ...request,
      input: expandCompactions(request.input, opened),
      newInput: expandCompactions(request.newInput, opened),
      settings,
    };
  }

  /** `open` of the (already expanded) request. */
  async open(sent: UpstreamRequest, signal: AbortSignal): Promise<UpstreamStream> {
    if (this.plan.mode === "upstream") return this.inner.open(sent, signal);
    const { compactionTrigger: trigger, ...plain } = sent;
    if (trigger) return this.compactAll(plain, signal);
    const { threshold, compactNow } = this.plan;
    if (compactNow || (threshold !== null && (await this.reaches(plain, threshold)))) {
      return this.compactThenAnswer(plain, signal);
    }
    return this.inner.open(plain, signal);
  }

  /** Whether the context (instructions and items) counts `threshold` tokens or more. */
  private async reaches(request: UpstreamRequest, threshold: number): Promise<boolean> {
    if (request.input.length === request.newInput.length) return false; // nothing to compact
    const count = await loadTokenizer();
    let tokens = typeof request.settings.instructions === "string" ? count(request.settings.instructions) : 0;
    for (const item of request.input) {
      tokens += itemTokens(item, count);
      if (tokens >= threshold) return true;
    }
    return false;
  }

  private summaryOf(request: UpstreamRequest, items: readonly StoredItem[], signal: AbortSignal) {
    const instructions = request.settings.instructions;
    return summarize(
      this.inner,
      {
        model: request.model,
        input: summaryInput(items, typeof instructions === "string" ? instructions : null),
        responseId: `${request.responseId}-compaction`,
        sessionKey: request.sessionKey,
        promptCacheKey: request.settings.prompt_cache_key ?? null,
      },
      signal,
    );
  }

  /** `compaction_trigger`: the whole context becomes one compaction item, the response's only output. */
  private async compactAll(request: UpstreamRequest, signal: AbortSignal): Promise<UpstreamStream> {
    const summary = await this.summaryOf(request, request.input, signal);
    const item = await compactionItem(summary.text, this.plan, Date.now());
    const first: UpstreamEvent = { type: "response.output_item.added", output_index: 0, item };
    return {
      first,
      rest: eventsOf([
        { type: "response.output_item.done", output_index: 0, item },
        {
          type: "response.completed",
          response: {
            id: request.responseId,
            object: "response",
            status: "completed",
            output: [item],
            usage: summary.usage,
          },
        },
      ]),
    };
  }

  /**
   * `context_management` over its threshold: the history (the context before the turn's input)
   * is summarized; the model answers from the summary and the input; the compaction item leads
   * the output.
   */
  private async compactThenAnswer(request: UpstreamRequest, signal: AbortSignal): Promise<UpstreamStream> {
    const history = request.input.slice(0, request.input.length - request.newInput.length);
    const summary = await this.summaryOf(request, history, signal);
    const item = await compactionItem(summary.text, this.plan, Date.now());
    const compacted = [expandedSummary(item.id, summary.text), ...request.newInput];
    const stream = await this.inner.open(
      { ...request, input: compacted, newInput: compacted, previousResponseId: null },
      signal,
    );
    const shift = (event: UpstreamEvent): UpstreamEvent => {
      let shifted = event;
      if (typeof event.output_index === "number")
        shifted = { ...shifted, output_index: event.output_index + 1 };
      const response = event.response;
      if (isRecord(response) && Array.isArray(response.output)) {
        shifted = {
          ...shifted,
          response: {
            ...response,
            output: [item, ...response.output],
            usage: addUsage(summary.usage, response.usage),
          },
        };
      }
      return shifted;
    };
    const first: UpstreamEvent = { type: "response.output_item.added", output_index: 0, item };
    const lead = [
      { type: "response.output_item.done", output_index: 0, item } as UpstreamEvent,
      shift(stream.first),
    ];
    const rest = stream.rest;
    return {
      first,
      rest: {
        [Symbol.asyncIterator]: () => {
          const queued = [...lead];
          const mapped = mapEvents(rest, shift)[Symbol.asyncIterator]();
          return {
            next: () => {
              const head = queued.shift();
              return head ? Promise.resolve({ done: false, value: head }) : mapped.next();
            },
            return: () => mapped.return?.() ?? Promise.resolve({ done: true, value: undefined }),
          };
        },
      },
      ...(stream.usage ? { usage: stream.usage } : {}),
    };
  }
}
