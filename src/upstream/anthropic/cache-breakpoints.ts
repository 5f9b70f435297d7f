/**
 * Automatic prompt-cache breakpoints for an Anthropic request (docs/anthropic.md, "Cache
 * breakpoints"). Claude caches a prompt prefix only where a block carries `cache_control`, at
 * most 4 per request; a lookup at a breakpoint also finds an entry up to 20 blocks before it; a
 * prefix shorter than the model's minimum cacheable length is not cached. Deltagate holds the
 * whole conversation, so it knows which prefix the next turn will reuse, and places:
 * 1. the static prefix: the last `system` block (or the last tool when there is no system),
 *    read by every turn whatever the conversation;
 * 2. the previous request's end: the last block before the previous assistant turn — the entry
 *    the previous request wrote at its tail; marked explicitly because the turn's new blocks
 *    (the answer, tool results) may be more than 20 blocks after it;
 * 3. the tail: the last block of the request, written now for the next turn to read.
 * A breakpoint whose prefix is estimated below `minTokens` (UTF-8 JSON bytes / 4) is left out,
 * so no slot is spent where nothing would be cached; thinking blocks never carry one (Claude
 * refuses `cache_control` on them). All get the same TTL (a longer TTL may not follow a shorter).
 * Pure: no I/O; it marks the blocks of a body built for this request only.
 * Source: https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching
 */
import type { AnthropicMessage, AnthropicTool, CacheControl, ContentBlock } from "./wire.ts";

/** Breakpoints Claude accepts per request. */
export const MAX_BREAKPOINTS = 4;
/** Minimum cacheable prompt of Claude Sonnet and Opus models, tokens (the default). */
export const DEFAULT_CACHE_MIN_TOKENS = 1024;

/** The parts of a request the breakpoints are placed in. */
export interface CacheablePrompt {
  tools?: AnthropicTool[];
  system?: Array<{ type: "text"; text: string; cache_control?: CacheControl }>;
  messages: AnthropicMessage[];
}

type Marked = { cache_control?: CacheControl };

interface Slot {
  target: Marked;
  /** Estimated tokens of the prompt through this block. */
  tokens: number;
  cacheable: boolean;
}

const estimate = (value: unknown) => Math.ceil(new TextEncoder().encode(JSON.stringify(value)).length / 4);

function uncacheable(block: ContentBlock): boolean {
  return block.type === "thinking" || block.type === "redacted_thinking";
}

/**
 * Marks up to three breakpoints (see the module rules) in `prompt`.
 * @param ttl `1h` when the client asked for long retention, else the default 5 minutes.
 * @returns the indexes (in tools → system → content order) of the marked blocks.
 */
export function placeBreakpoints(
  prompt: CacheablePrompt,
  minTokens: number,
  ttl: "5m" | "1h" = "5m",
): number[] {
  const slots: Slot[] = [];
  let tokens = 0;
  const add = (target: Marked, cacheable: boolean): number => {
    tokens += estimate(target);
    return slots.push({ target, tokens, cacheable }) - 1;
  };
  for (const tool of prompt.tools ?? []) add(tool, true);
  for (const block of prompt.system ?? []) add(block, true);
  const staticEnd = slots.length - 1;
  /** The index of each message's last cacheable block, or -1. */
  const messageEnds = prompt.messages.map((message) => {
    let end = -1;
    for (const block of message.content) {
      const index = add(block, !uncacheable(block));
      if (!uncacheable(block)) end = index;
    }
    return end;
  });
  const chosen = new Set<number>();
  if (staticEnd >= 0) chosen.add(staticEnd); // the last system block, else the last tool
  const lastAssistant = prompt.messages.findLastIndex(
    (message, index) => message.role === "assistant" && index < prompt.messages.length - 1,
  );
  for (let m = lastAssistant - 1; m >= 0; m--) {
    const end = messageEnds[m] ?? -1;
    if (end >= 0) {
      chosen.add(end);
      break;
    }
  }
  const tail = messageEnds.findLast((end) => end >= 0);
  if (tail !== undefined) chosen.add(tail);
  const marked = [...chosen]
    .filter((index) => (slots[index]?.tokens ?? 0) >= minTokens && slots[index]?.cacheable)
    .sort((a, b) => a - b)
    .slice(-MAX_BREAKPOINTS);
  for (const index of marked) {
    const slot = slots[index];
    if (slot)
      slot.target.cache_control = ttl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };
  }
  return marked;
}
