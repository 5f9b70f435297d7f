/**
 * A call's cost (src/context/turn-cost.ts, issue #26.5): the usage split into uncached, cached,
 * cache-write and output tokens, each priced per million; reasoning priced as output; nano-dollar
 * rounding; a model without a price costs null, never 0; `PRICES` validated with errors that name
 * the setting, the model and the field (through `parseConfig`, as at startup).
 */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../src/config/config.ts";
import type { Env } from "../../../src/config/env.ts";
import {
  costNanoUsd,
  meteredCall,
  meteredTokens,
  NO_PRICES,
  parsePrices,
  priceOf,
  usdOf,
} from "../../../src/context/turn-cost.ts";

// Claude Sonnet 4.5's list prices (https://docs.anthropic.com/en/docs/about-claude/pricing):
// $3 input, $0.30 cache read, $3.75 5-minute cache write, $15 output per million tokens.
const SONNET = { input: 3, cached_input: 0.3, cache_write: 3.75, output: 15 };

const usage = (input: number, cached: number, cacheWrite: number, output: number, reasoning = 0) => ({
  input_tokens: input,
  input_tokens_details: { cached_tokens: cached, cache_write_tokens: cacheWrite },
  output_tokens: output,
  output_tokens_details: { reasoning_tokens: reasoning },
  total_tokens: input + output,
});

describe("meteredTokens", () => {
  it("splits a Responses usage; cached and cache-write tokens are part of the input", () => {
    expect(meteredTokens(usage(10_000, 8_000, 1_500, 300))).toEqual({
      input: 10_000,
      cached: 8_000,
      cacheWrite: 1_500,
      output: 300,
    });
  });

  it("reads a usage without details (OpenAI without cache writes, Gemini) or none at all as 0", () => {
    expect(meteredTokens({ input_tokens: 5, output_tokens: 2 })).toEqual({
      input: 5,
      cached: 0,
      cacheWrite: 0,
      output: 2,
    });
    expect(meteredTokens(null)).toEqual({ input: 0, cached: 0, cacheWrite: 0, output: 0 });
    expect(meteredTokens({ input_tokens: -3, output_tokens: "7" })).toEqual({
      input: 0,
      cached: 0,
      cacheWrite: 0,
      output: 0,
    });
  });

  it("never counts more cached and cache-write tokens than the input holds", () => {
    expect(meteredTokens(usage(100, 90, 50, 0))).toEqual({
      input: 100,
      cached: 90,
      cacheWrite: 10,
      output: 0,
    });
  });
});

describe("costNanoUsd", () => {
  const price = parsePrices(JSON.stringify({ sonnet: SONNET }), "PRICES").exact.get("sonnet")!;

  it("prices cached tokens at cached_input, cache writes at cache_write, the rest of the input at input", () => {
    // 500 uncached × $3 + 8,000 cached × $0.30 + 1,500 written × $3.75 + 300 output × $15, per million
    // = 0.0015 + 0.0024 + 0.005625 + 0.0045 = $0.014025.
    const nano = costNanoUsd(meteredTokens(usage(10_000, 8_000, 1_500, 300)), price);
    expect(nano).toBe(14_025_000);
    expect(usdOf(nano)).toBe(0.014025);
  });

  it("prices reasoning tokens as output (they are part of output_tokens, as providers bill them)", () => {
    const withReasoning = costNanoUsd(meteredTokens(usage(0, 0, 0, 1_000, 800)), price);
    const without = costNanoUsd(meteredTokens(usage(0, 0, 0, 1_000, 0)), price);
    expect(withReasoning).toBe(without);
    expect(withReasoning).toBe(15_000_000);
  });

  it("rounds to the nearest nano-dollar, once per call", () => {
    // 1 token at $0.0375 per million = 37.5 nano-dollars → 38.
    const cheap = parsePrices('{"m":{"input":0.0375,"output":0}}', "PRICES").exact.get("m")!;
    expect(costNanoUsd({ input: 1, cached: 0, cacheWrite: 0, output: 0 }, cheap)).toBe(38);
    expect(Number.isInteger(costNanoUsd(meteredTokens(usage(12_345, 6_789, 11, 987)), price))).toBe(true);
  });
});

describe("meteredCall", () => {
  const table = parsePrices(
    JSON.stringify({ "claude-*": { input: 1, output: 2 }, "claude-sonnet": SONNET }),
    "PRICES",
  );

  it("takes the exact name first, then a glob", () => {
    expect(priceOf(table, "claude-sonnet")?.cacheWrite).toBe(3.75);
    expect(priceOf(table, "claude-haiku")).toEqual({ input: 1, cachedInput: 1, cacheWrite: 1, output: 2 });
    expect(priceOf(table, "gpt-5.1")).toBeNull();
  });

  it("gives a model without a price a null cost, never 0; a priced call with no tokens costs 0", () => {
    expect(meteredCall(table, "gpt-5.1", usage(100, 0, 0, 10)).costNanoUsd).toBeNull();
    expect(meteredCall(NO_PRICES, "claude-sonnet", usage(100, 0, 0, 10)).costNanoUsd).toBeNull();
    expect(meteredCall(table, "claude-sonnet", null).costNanoUsd).toBe(0);
    expect(meteredCall(table, "claude-sonnet", usage(1_000_000, 0, 0, 0)).costNanoUsd).toBe(3e9);
  });
});

describe("PRICES", () => {
  const configOf = (prices: string) => parseConfig({ PRICES: prices } as unknown as Env);

  it("is optional: unset, no model has a price", () => {
    expect(priceOf(parseConfig({} as Env).prices, "gpt-5.1")).toBeNull();
  });

  it("defaults cached_input and cache_write to input", () => {
    const config = configOf('{"gpt-5.1":{"input":1.25,"cached_input":0.125,"output":10}}');
    expect(priceOf(config.prices, "gpt-5.1")).toEqual({
      input: 1.25,
      cachedInput: 0.125,
      cacheWrite: 1.25,
      output: 10,
    });
  });

  it("refuses what is not a price table, naming the setting, the model and the field", () => {
    expect(() => configOf("{")).toThrow("PRICES is not valid JSON");
    expect(() => configOf("[]")).toThrow(/^PRICES must be a JSON object of model →/);
    expect(() => configOf('{"m":{"input":1}}')).toThrow(/^PRICES\.m\.output is invalid/);
    expect(() => configOf('{"m":{"input":-1,"output":1}}')).toThrow(/^PRICES\.m\.input is invalid/);
    expect(() => configOf('{"m":{"input":"3","output":1}}')).toThrow(/^PRICES\.m\.input is invalid/);
    expect(() => configOf('{"m":{"input":1,"output":1,"cache_read":1}}')).toThrow(/^PRICES\.m is invalid/);
    expect(() => configOf('{"m":3}')).toThrow(/^PRICES\.m is invalid/);
  });
});
