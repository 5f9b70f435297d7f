/**
 * What a metered call costs: its usage split into token classes and priced by the model's entry
 * in the price table (`PRICES`, src/config/schema.ts; docs/tenancy.md "Usage"). Owns the price
 * schema, the split and the rounding; the ledger (src/tenancy/), `GET /v1/usage` and the turn's
 * log line and timing event (src/pipeline/turn-timing.ts) all take the figure made here.
 * The split, from a Responses `usage` (every route's synthesizer reports it so, docs/upstreams.md):
 * `input_tokens` includes the cached and the cache-write tokens (OpenAI's `cached_tokens` are part
 * of `input_tokens`; the Anthropic synthesizer adds `cache_read_input_tokens` and
 * `cache_creation_input_tokens` to Anthropic's own `input_tokens`; Gemini's `promptTokenCount`
 * includes `cachedContentTokenCount`), so cached tokens are priced at `cached_input`, cache-write
 * tokens at `cache_write`, the rest of the input at `input`; `output_tokens` includes the
 * reasoning tokens, priced at `output` as every provider bills them.
 * Invariants: a model without a price has no cost (null), never 0; a cost is an integer of
 * nano-dollars (1e-9 USD), rounded once per call, so sums of costs are exact.
 * Sources: https://platform.openai.com/docs/api-reference/responses/object#responses/object-usage,
 * https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching#pricing,
 * https://ai.google.dev/gemini-api/docs/caching
 */
import { z } from "zod";

/** One model's prices, USD per million tokens. */
export interface ModelPrice {
  input: number;
  cachedInput: number;
  cacheWrite: number;
  output: number;
}

/** Model → price: exact names first, then `*` globs in the order written. */
export interface PriceTable {
  readonly exact: ReadonlyMap<string, ModelPrice>;
  readonly globs: ReadonlyArray<{ pattern: RegExp; price: ModelPrice }>;
}

/** No prices: every cost is null. */
export const NO_PRICES: PriceTable = { exact: new Map(), globs: [] };

/** A call's tokens by how they are priced. */
export interface MeteredTokens {
  /** All input tokens, cached and cache-write ones included. */
  input: number;
  /** Input tokens read from the provider's prompt cache. */
  cached: number;
  /** Input tokens written to the provider's prompt cache (Anthropic's cache creation). */
  cacheWrite: number;
  /** All output tokens, reasoning included. */
  output: number;
}

/** A call's tokens and what they cost (null: the model has no price). */
export interface MeteredCall {
  tokens: MeteredTokens;
  costNanoUsd: number | null;
}

const usd = z.number().finite().nonnegative();
const priceSchema = z.strictObject({
  input: usd,
  cached_input: usd.optional(),
  cache_write: usd.optional(),
  output: usd,
});

/**
 * `PRICES`: `{"model": {"input", "cached_input"?, "cache_write"?, "output"}}`, USD per million
 * tokens; `cached_input` and `cache_write` default to `input` (a provider without a cache
 * discount or surcharge). A key with `*` is a glob, as in `UPSTREAMS`.
 * @throws {Error} naming the variable, and the model and field, when it is not such a table.
 */
export function parsePrices(raw: string, name: string): PriceTable {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error(`${name} is not valid JSON`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error(`${name} must be a JSON object of model → {input, cached_input, cache_write, output}`);
  }
  const exact = new Map<string, ModelPrice>();
  const globs: { pattern: RegExp; price: ModelPrice }[] = [];
  for (const [model, value] of Object.entries(parsed)) {
    const result = priceSchema.safeParse(value);
    if (!result.success) {
      const issue = result.error.issues[0];
      const field = issue?.path.join(".") || "";
      throw new Error(
        `${name}.${model}${field ? `.${field}` : ""} is invalid: ${issue?.message ?? "not a price"} (USD per million tokens, a number ≥ 0)`,
      );
    }
    const { input, output } = result.data;
    const price: ModelPrice = {
      input,
      cachedInput: result.data.cached_input ?? input,
      cacheWrite: result.data.cache_write ?? input,
      output,
    };
    if (model.includes("*")) globs.push({ pattern: globPattern(model), price });
    else exact.set(model, price);
  }
  return { exact, globs };
}

function globPattern(glob: string): RegExp {
  const literal = (text: string) => text.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`^${glob.split("*").map(literal).join(".*")}$`);
}

/** The price of `model`, or null when the table has none. */
export function priceOf(table: PriceTable, model: string): ModelPrice | null {
  return table.exact.get(model) ?? table.globs.find((glob) => glob.pattern.test(model))?.price ?? null;
}

/** A usage's tokens by class (0 for what it does not report; cached and cache-write clamped to the input). */
export function meteredTokens(usage: unknown): MeteredTokens {
  const fields = record(usage);
  const details = record(fields.input_tokens_details);
  const input = count(fields.input_tokens);
  const cached = Math.min(count(details.cached_tokens), input);
  const cacheWrite = Math.min(count(details.cache_write_tokens), input - cached);
  return { input, cached, cacheWrite, output: count(fields.output_tokens) };
}

/** The cost of `tokens` at `price`, in nano-dollars (1e-9 USD), rounded to the nearest. */
export function costNanoUsd(tokens: MeteredTokens, price: ModelPrice): number {
  const uncached = tokens.input - tokens.cached - tokens.cacheWrite;
  // USD per million tokens = 1,000 nano-dollars per token.
  const nano =
    (uncached * price.input +
      tokens.cached * price.cachedInput +
      tokens.cacheWrite * price.cacheWrite +
      tokens.output * price.output) *
    1_000;
  return Math.round(nano);
}

/** A call of `model` with `usage` (a Responses usage, or nothing): its tokens and cost. */
export function meteredCall(table: PriceTable, model: string, usage: unknown): MeteredCall {
  const tokens = meteredTokens(usage);
  const price = priceOf(table, model);
  return { tokens, costNanoUsd: price ? costNanoUsd(tokens, price) : null };
}

/** Nano-dollars as USD (null stays null). */
export function usdOf(nanoUsd: number | null): number | null {
  return nanoUsd === null ? null : nanoUsd / 1e9;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}
