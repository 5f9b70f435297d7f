/**
 * Implicit caching of the simulator's Gemini endpoints, as Google documents it: enabled by
 * default, nothing to mark; a request whose prompt begins with the prompt of a recent request
 * (same model, same key) reads that common prefix from cache, reported as
 * `usageMetadata.cachedContentTokenCount` (a part of `promptTokenCount`), when it is at least the
 * model's minimum (1,024 tokens for Flash models, 4,096 for Pro ones; one configurable minimum
 * here). The prompt is `systemInstruction`, `tools` and `toolConfig`, then every part of every
 * content, in order; prefixes end at part boundaries. Entries live for `TTL_MS` after their last
 * use. Real implicit caching is best-effort; the simulator hits every time it can, so the
 * cache's effect on price and prefill time is the upper bound.
 * Source: https://ai.google.dev/gemini-api/docs/caching ("Implicit caching", minimum input token
 * counts).
 */
import { createHash } from "node:crypto";
import { canonicalJson, isJsonObject, type JsonObject } from "../json.ts";
import { estimateTokens } from "../tokens.ts";

/** How long an unused prefix stays cached, ms. */
const TTL_MS = 5 * 60_000;
/** Entries kept at most (oldest dropped first). */
const MAX_ENTRIES = 50_000;

/** A prompt boundary: the rolling hash of the prompt up to it, and its tokens. */
interface Boundary {
  hash: string;
  tokens: number;
}

function boundaries(scope: string, body: JsonObject): Boundary[] {
  const header = canonicalJson({
    systemInstruction: body.systemInstruction ?? null,
    tools: body.tools ?? null,
    toolConfig: body.toolConfig ?? null,
  });
  let hash = createHash("sha256").update(`${scope}\n${header}`).digest("hex");
  let tokens = estimateTokens(header);
  const out: Boundary[] = [{ hash, tokens }];
  for (const content of Array.isArray(body.contents) ? body.contents : []) {
    if (!isJsonObject(content)) continue;
    for (const part of Array.isArray(content.parts) ? content.parts : []) {
      const text = canonicalJson({ role: content.role ?? "user", part });
      hash = createHash("sha256").update(`${hash}\n${text}`).digest("hex");
      tokens += estimateTokens(text);
      out.push({ hash, tokens });
    }
  }
  return out;
}

/** The implicit cache of one simulator instance. */
export class ImplicitCache {
  readonly #minTokens: number;
  readonly #entries = new Map<string, number>();

  /** @param minTokens the smallest prefix that is cached, tokens. */
  constructor(minTokens: number) {
    this.#minTokens = minTokens;
  }

  /**
   * Accounts a request: the cached prefix it reads, then its own prefixes cached for later ones.
   * @param scope what separates caches (model and key).
   * @returns the prompt's tokens and how many of them were read from cache.
   */
  account(scope: string, body: JsonObject, now = Date.now()): { prompt: number; cached: number } {
    const marks = boundaries(scope, body);
    const prompt = marks.at(-1)?.tokens ?? 0;
    let cached = 0;
    for (let i = marks.length - 1; i >= 0; i--) {
      const mark = marks[i]!;
      const expires = this.#entries.get(mark.hash);
      if (expires !== undefined && expires > now && mark.tokens >= this.#minTokens) {
        cached = mark.tokens;
        break;
      }
    }
    for (const mark of marks) {
      if (mark.tokens < this.#minTokens) continue;
      this.#entries.delete(mark.hash);
      this.#entries.set(mark.hash, now + TTL_MS);
    }
    while (this.#entries.size > MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value ?? "");
    return { prompt, cached };
  }
}
