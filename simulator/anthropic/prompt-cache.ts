/**
 * Prompt caching of the simulator's `/v1/messages`, as Anthropic documents it: the prompt is the
 * sequence tools → system → messages, cut into blocks (each tool, each system block, each content
 * block); a block marked with `cache_control` is a breakpoint. At most 4 breakpoints. For each
 * breakpoint the cache is looked up at that block and at the block boundaries before it, up to
 * 20 blocks back; the longest prefix found is read (`cache_read_input_tokens`). Every breakpoint
 * whose prefix is at least the minimum cacheable length and not cached yet is written
 * (`cache_creation_input_tokens` = the tokens between the read prefix and the last breakpoint
 * written); the tokens after the last breakpoint are plain `input_tokens`. An entry lives for its
 * TTL (`5m` default, or `1h`), refreshed on every read. A prefix below the minimum is simply not
 * cached (no error), as documented.
 * Source: https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching
 */
import { createHash } from "node:crypto";
import { canonicalJson, isJsonObject, type JsonObject } from "../json.ts";
import { estimateTokens } from "../tokens.ts";
import { invalid } from "./errors.ts";

/** Blocks before a breakpoint that are checked for an earlier cache entry. */
export const LOOKBACK_BLOCKS = 20;
/** Breakpoints a request may carry. */
export const MAX_BREAKPOINTS = 4;
/** TTLs in ms by `cache_control.ttl`. */
const TTL_MS: Record<string, number> = { "5m": 5 * 60_000, "1h": 60 * 60_000 };

/** One block of the prompt, in order. */
interface PromptBlock {
  /** Rolling hash of the prompt up to and including this block. */
  hash: string;
  /** Tokens of the prompt up to and including this block. */
  tokens: number;
  /** The block's `cache_control.ttl` in ms when it is a breakpoint, else null. */
  ttlMs: number | null;
}

/** The cache accounting of one request. */
export interface CacheUsage {
  input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
  /** Tokens written per TTL (`cache_creation` in usage). */
  ephemeral_5m_input_tokens: number;
  ephemeral_1h_input_tokens: number;
}

function withoutCacheControl(block: unknown): unknown {
  if (!isJsonObject(block) || !("cache_control" in block)) return block;
  const { cache_control: _c, ...rest } = block;
  return rest;
}

function ttlOf(block: unknown): number | null {
  if (!isJsonObject(block) || !isJsonObject(block.cache_control)) return null;
  const ttl = block.cache_control.ttl ?? "5m";
  const ms = typeof ttl === "string" ? TTL_MS[ttl] : undefined;
  if (ms === undefined) throw invalid(`cache_control.ttl: Input should be '5m' or '1h'`);
  return ms;
}

/** The prompt's blocks in cache order (tools, system, messages' content). */
export function promptBlocks(body: JsonObject): PromptBlock[] {
  const raw: unknown[] = [];
  if (Array.isArray(body.tools)) raw.push(...body.tools);
  if (typeof body.system === "string") raw.push({ type: "text", text: body.system });
  else if (Array.isArray(body.system)) raw.push(...body.system);
  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    if (!isJsonObject(message)) continue;
    const content = message.content;
    if (typeof content === "string") raw.push({ role: message.role, type: "text", text: content });
    else if (Array.isArray(content)) {
      for (const block of content) raw.push(isJsonObject(block) ? { role: message.role, ...block } : block);
    }
  }
  let hash = createHash("sha256").update(String(body.model)).digest("hex");
  let tokens = 0;
  return raw.map((block) => {
    const text = canonicalJson(withoutCacheControl(block));
    hash = createHash("sha256").update(hash).update(text).digest("hex");
    tokens += estimateTokens(text);
    return { hash, tokens, ttlMs: ttlOf(block) };
  });
}

/** The cache entries of one simulator instance (an entry per breakpoint prefix). */
export class PromptCache {
  readonly #entries = new Map<string, { expiresAt: number; ttlMs: number }>();
  readonly #minTokens: number;
  readonly #now: () => number;

  /** @param minTokens the minimum cacheable prompt length, tokens. */
  constructor(minTokens: number, now: () => number = Date.now) {
    this.#minTokens = minTokens;
    this.#now = now;
  }

  /**
   * Reads and writes the request's breakpoints.
   * @throws {AnthropicError} 400 for more than `MAX_BREAKPOINTS` breakpoints or an unknown TTL.
   */
  account(body: JsonObject): CacheUsage {
    const blocks = promptBlocks(body);
    const total = blocks.at(-1)?.tokens ?? 0;
    const breakpoints = blocks.flatMap((block, index) => (block.ttlMs === null ? [] : [index]));
    if (breakpoints.length > MAX_BREAKPOINTS) {
      throw invalid(
        `A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${breakpoints.length}.`,
      );
    }
    const now = this.#now();
    for (const [hash, entry] of this.#entries) if (entry.expiresAt <= now) this.#entries.delete(hash);
    let read = 0;
    for (const at of breakpoints) {
      for (let index = at; index >= 0 && index >= at - LOOKBACK_BLOCKS; index--) {
        const block = blocks[index];
        const entry = block ? this.#entries.get(block.hash) : undefined;
        if (!block || !entry) continue;
        entry.expiresAt = now + entry.ttlMs; // a read refreshes the entry
        read = Math.max(read, block.tokens);
        break;
      }
    }
    const usage: CacheUsage = {
      input_tokens: 0,
      cache_read_input_tokens: read,
      cache_creation_input_tokens: 0,
      ephemeral_5m_input_tokens: 0,
      ephemeral_1h_input_tokens: 0,
    };
    let written = read;
    for (const at of breakpoints) {
      const block = blocks[at];
      if (!block || block.ttlMs === null || block.tokens < this.#minTokens || block.tokens <= read) continue;
      if (!this.#entries.has(block.hash)) {
        this.#entries.set(block.hash, { expiresAt: now + block.ttlMs, ttlMs: block.ttlMs });
      }
      const fresh = block.tokens - written;
      if (fresh <= 0) continue;
      if (block.ttlMs === TTL_MS["1h"]) usage.ephemeral_1h_input_tokens += fresh;
      else usage.ephemeral_5m_input_tokens += fresh;
      written = block.tokens;
    }
    usage.cache_creation_input_tokens = written - read;
    usage.input_tokens = total - written;
    return usage;
  }
}
