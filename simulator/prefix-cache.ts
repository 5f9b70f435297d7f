/**
 * Prompt prefix cache model: remembers serialized contexts as lists of segment hashes with
 * token counts, and reports how many leading tokens of a new context were seen before (the
 * `cached_tokens` of usage; they cost no prefill time). Comparison is segment by segment, a
 * segment being one item (or the tools / instructions block) hashed by canonical JSON.
 */
import { hashJson } from "./json.ts";
import { estimateJsonTokens } from "./tokens.ts";

/** One serialized context segment: hash of its canonical JSON and its token estimate. */
export interface Segment {
  hash: string;
  tokens: number;
}

/** Builds the segments of a context: tools block, instructions, then each item. */
export function contextSegments(tools: unknown, instructions: unknown, items: unknown[]): Segment[] {
  const segs: Segment[] = [];
  const push = (value: unknown): void => {
    segs.push({ hash: hashJson(value), tokens: estimateJsonTokens(value) });
  };
  if (Array.isArray(tools) && tools.length > 0) push({ tools });
  if (typeof instructions === "string" && instructions !== "") push({ instructions });
  for (const item of items) push(item);
  return segs;
}

/** Total tokens of `segments`. */
export function segmentTokens(segments: Segment[]): number {
  return segments.reduce((sum, s) => sum + s.tokens, 0);
}

/** A bounded set of remembered contexts (most recent `capacity` entries). */
export class PrefixCache {
  readonly #entries: Segment[][] = [];
  readonly #capacity: number;

  /** `capacity` = number of contexts remembered (oldest evicted first). */
  constructor(capacity = 64) {
    this.#capacity = capacity;
  }

  /** Tokens of the longest remembered prefix of `segments` (0 when nothing matches). */
  cachedTokens(segments: Segment[]): number {
    let best = 0;
    for (const entry of this.#entries) {
      let tokens = 0;
      const n = Math.min(entry.length, segments.length);
      for (let i = 0; i < n; i++) {
        const a = entry[i];
        const b = segments[i];
        if (!a || !b || a.hash !== b.hash) break;
        tokens += b.tokens;
      }
      if (tokens > best) best = tokens;
    }
    return best;
  }

  /** Remembers `segments` as a prefix for later requests. */
  remember(segments: Segment[]): void {
    if (segments.length === 0) return;
    this.#entries.push(segments);
    if (this.#entries.length > this.#capacity) this.#entries.shift();
  }
}

/** Prefix caches keyed by `prompt_cache_key` ("default" when absent), for HTTP requests. */
export class KeyedPrefixCache {
  readonly #caches = new Map<string, PrefixCache>();

  /** The cache for `key` (null/undefined → "default"), created on first use. */
  get(key: string | null | undefined): PrefixCache {
    const k = key ?? "default";
    let cache = this.#caches.get(k);
    if (!cache) {
      cache = new PrefixCache();
      this.#caches.set(k, cache);
    }
    return cache;
  }
}
