/**
 * Issue #26's benchmark report, pure parts: each turn's cache figures from the provider's usage
 * (Anthropic, Gemini) and from a Response, the per-scenario cache summary (shares per turn, the
 * most any cache could read, the previous prompt read back) and the "≥ 90 % from turn 2 on"
 * target. No processes, no timings.
 */
import type { Response as ResponsesResponse } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { cacheSummary } from "../../bench/cache-report.ts";
import { geminiCache } from "../../bench/gemini-transport.ts";
import { messagesCache } from "../../bench/messages-transport.ts";
import type { LoopSample, TurnCache } from "../../bench/metrics.ts";
import { providerTargets, steadyFrom } from "../../bench/provider-report.ts";
import { buildReport, newScenarioRun } from "../../bench/report.ts";
import type { ProfileResult, TargetCheck } from "../../bench/results.ts";
import { scenarioById } from "../../bench/scenarios.ts";
import { cacheOf } from "../../bench/ws-transport.ts";

function loop(caches: Array<TurnCache | null>): LoopSample {
  return {
    loopMs: 100,
    connectMs: null,
    turns: caches.map((cache) => ({
      latencyMs: 10,
      ttftMs: 5,
      clientBytes: 100,
      reconnected: false,
      fallback: false,
      timing: null,
      cache,
    })),
    client: { connections: 1, upBytes: 100, downBytes: 10 },
    deflate: null,
    hops: {},
    upstream: { requests: caches.length, bytes: 1000, transports: { anthropic: caches.length } },
    workerdCpuMs: null,
    devProxyCpuMs: null,
  };
}

const c = (inputTokens: number, cachedTokens: number): TurnCache => ({ inputTokens, cachedTokens });

describe("a turn's cache figures", () => {
  it("counts Anthropic's cache writes and reads as input, of which the reads are cached", () => {
    expect(
      messagesCache({ input_tokens: 10, cache_creation_input_tokens: 30, cache_read_input_tokens: 60 }),
    ).toEqual(c(100, 60));
    expect(messagesCache({ input_tokens: 10 })).toEqual(c(10, 0));
  });

  it("reads Gemini's cachedContentTokenCount as a part of promptTokenCount", () => {
    expect(geminiCache({ promptTokenCount: 100, cachedContentTokenCount: 90 })).toEqual(c(100, 90));
    expect(geminiCache({ promptTokenCount: 100 })).toEqual(c(100, 0));
  });

  it("reads a Response's input_tokens_details.cached_tokens, null without usage", () => {
    const usage = {
      input_tokens: 200,
      input_tokens_details: { cached_tokens: 150 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 205,
    };
    expect(cacheOf({ usage } as unknown as ResponsesResponse)).toEqual(c(200, 150));
    expect(cacheOf({} as unknown as ResponsesResponse)).toBeNull();
  });
});

describe("cache summary", () => {
  it("gives per-turn medians, the lowest turn from turn 2, the bound and the previous prompt read back", () => {
    const summary = cacheSummary([
      loop([c(1000, 0), c(2000, 1000), c(2500, 2000)]),
      loop([c(1000, 500), c(2000, 500), c(2500, 2000)]),
    ]);
    expect(summary?.perTurn).toEqual([0.25, 0.375, 0.8]);
    expect(summary?.fromTurn2).toEqual({ min: 0.25, median: 0.65, turns: 4 });
    expect(summary?.tokensFromTurn2).toEqual({ cached: 5500, input: 9000, share: 5500 / 9000 });
    // The most any cache could read: the previous request's 1000 of 2000, 2000 of 2500.
    expect(summary?.boundFromTurn2).toEqual({ min: 0.5, median: 0.65 });
    // The previous request read back: 1000/1000 and 500/1000 on turn 2, 2000/2000 on turn 3.
    expect(summary?.reuseFromTurn2).toEqual({ min: 0.5, median: 1 });
  });

  it("is null when no turn reports usage, never 0 %", () => {
    expect(cacheSummary([loop([null, null])])).toBeNull();
  });

  it("finds the turn from which every turn reaches the target", () => {
    expect(steadyFrom([0.98, 0.65, 0.93, 0.85, 0.91, 0.95], 0.9)).toBe(5);
    expect(steadyFrom([0.98, 0.95, 0.96], 0.9)).toBe(2);
    expect(steadyFrom([0.98, 0.95, 0.5], 0.9)).toBeNull();
  });
});

describe("issue #26's target", () => {
  const targetOf = (loops: LoopSample[] | null): TargetCheck | undefined => {
    const run = newScenarioRun(scenarioById("AN-dg"));
    for (const [i, sample] of (loops ?? []).entries()) run.loops.set(i, sample);
    const profile: ProfileResult = {
      id: "providers",
      label: "providers",
      assumptions: "",
      rounds: 1,
      scenarios: loops ? buildReport([run]) : [],
    };
    const out: TargetCheck[] = [];
    providerTargets([profile], out);
    return out.find((t) => t.where.startsWith("providers: AN-dg"));
  };

  it("is met when every turn from turn 2 on reads ≥ 90 % of its input from cache", () => {
    const target = targetOf([loop([c(1000, 0), c(10_000, 9_000), c(10_500, 10_000)])]);
    expect(target?.status).toBe("met");
    expect(target?.measured).toContain("lowest turn 90.0%");
  });

  it("is not met when one turn reads less, and says which turn reaches it", () => {
    const target = targetOf([loop([c(1000, 0), c(2000, 1000), c(20_000, 19_000)])]);
    expect(target?.status).toBe("not met");
    expect(target?.measured).toContain("lowest turn 50.0%");
    expect(target?.measured).toContain("from turn 3 on");
  });

  it("is not measured without the AN-dg loop", () => {
    expect(targetOf(null)?.status).toBe("not measured");
  });
});
