/**
 * The env file `npm start` hands to wrangler (scripts/local-stack.ts `toEnvFile`): values as
 * wrangler will read them literally, a JSON setting written over several lines (as a shell user
 * writes `PRICES` or `UPSTREAMS`) carried on one line, and a value it cannot carry refused by the
 * variable's name, never echoing the value. No processes.
 */
import { describe, expect, it } from "vitest";
import { toEnvFile } from "../../scripts/local-stack.ts";

describe("toEnvFile", () => {
  it("single-quotes each value and escapes `$` (wrangler expands it)", () => {
    expect(toEnvFile({ A: "plain", B: "cost $5" })).toBe("A='plain'\nB='cost \\$5'\n");
  });

  it("carries a JSON value written over several lines on one line, the same JSON", () => {
    const prices = `{"claude-sonnet-4-5": {"input": 3, "output": 15},
         "gpt-5.1*": {"input": 1.25, "output": 10}}`;
    const line = toEnvFile({ PRICES: prices });
    expect(line).toBe(
      `PRICES='{"claude-sonnet-4-5":{"input":3,"output":15},"gpt-5.1*":{"input":1.25,"output":10}}'\n`,
    );
    expect(JSON.parse(line.slice("PRICES='".length, -2))).toEqual(JSON.parse(prices));
  });

  it("refuses a line break outside JSON, and a single quote, naming the variable and not the value", () => {
    for (const value of ["not\njson secret-value", "it's secret-value"]) {
      expect(() => toEnvFile({ SOME_SETTING: value })).toThrow(
        "The value of SOME_SETTING contains a quote or a line break, which the env file cannot carry.",
      );
      expect(() => toEnvFile({ SOME_SETTING: value })).not.toThrow(/secret-value/);
    }
  });
});
