/**
 * Incremental input checks (src/safety/input-checker.ts) against an in-memory verdict cache: only
 * uncached texts reach the classifier, in one call, each once; a checked chain's history is
 * skipped; the item policy trusts or samples by type; failures come back as errors, not verdicts.
 */
import { describe, expect, it } from "vitest";
import { type Classifier, ClassifierUnavailable, type Verdict } from "../../../src/safety/classifier.ts";
import { sha256Hex } from "../../../src/safety/content.ts";
import { InputChecker, type VerdictLookup } from "../../../src/safety/input-checker.ts";
import { applyOverride, DEFAULT_POLICY, type SafetyPolicy } from "../../../src/safety/policy.ts";
import type { CachedClassifier } from "../../../src/safety/verdict-cache.ts";

class FakeCache implements VerdictLookup {
  readonly verdicts = new Map<string, Verdict>();
  readonly chains = new Map<string, Verdict>();
  lookup(_classifier: CachedClassifier, hashes: readonly string[]) {
    return new Map(hashes.filter((h) => this.verdicts.has(h)).map((h) => [h, this.verdicts.get(h)!]));
  }
  chain(responseId: string, policy: string) {
    return this.chains.get(`${responseId}|${policy}`) ?? null;
  }
}

function recording(combined = false) {
  const calls: string[][] = [];
  const classifier: Classifier & { fail?: boolean } = {
    id: "rec",
    model: "rec",
    local: false,
    combined,
    async classify(texts) {
      calls.push([...texts]);
      if (classifier.fail) throw new ClassifierUnavailable("error", "down");
      return texts.map((t) => ({
        flagged: t.includes("BAD"),
        categories: { bad: t.includes("BAD") },
        scores: {},
      }));
    },
  };
  return { classifier, calls };
}

const msg = (text: string) => ({ type: "message", role: "user", content: text });
const out = (text: string) => ({ type: "function_call_output", call_id: "c", output: text });

function request(
  classifier: Classifier,
  policy: SafetyPolicy,
  parts: Partial<Parameters<InputChecker["check"]>[0]>,
) {
  return {
    classifier,
    policy,
    policyKey: "k",
    parentId: null,
    history: [],
    input: [],
    instructions: null,
    tools: null,
    ...parts,
  };
}

describe("input checker", () => {
  it("sends each distinct uncached text once, in one call, and returns the verdicts to cache", async () => {
    const cache = new FakeCache();
    const { classifier, calls } = recording();
    const checker = new InputChecker(cache);
    const tools = [{ type: "function", name: "exec", description: "Runs." }];
    const result = await checker.check(
      request(classifier, DEFAULT_POLICY, {
        instructions: "Be brief.",
        tools,
        input: [msg("hi"), msg("hi"), msg("BAD")],
      }),
    );
    expect(calls).toEqual([["Be brief.", "exec\nRuns.", "hi", "BAD"]]);
    expect(result.verdict.flagged).toBe(true);
    expect(result.pending).toHaveLength(4);
    expect(result.accounting).toMatchObject({ considered: 5, batchSize: 4, calls: 1, cacheHits: 0 });
    // Next turn: the same instructions and tools are cached; only the new item goes out.
    for (const entry of result.pending) cache.verdicts.set(entry.hash, entry.verdict);
    const next = await checker.check(
      request(classifier, DEFAULT_POLICY, { instructions: "Be brief.", tools, input: [out("total 0")] }),
    );
    expect(calls[1]).toEqual(["total 0"]);
    expect(next.accounting).toMatchObject({ cacheHits: 2, batchSize: 1 });
  });

  it("makes no call when everything is cached", async () => {
    const cache = new FakeCache();
    cache.verdicts.set(await sha256Hex("hi"), { flagged: false, categories: {}, scores: {} });
    const { classifier, calls } = recording();
    const result = await new InputChecker(cache).check(
      request(classifier, DEFAULT_POLICY, { input: [msg("hi")] }),
    );
    expect(calls).toEqual([]);
    expect(result.accounting).toMatchObject({ calls: 0, cacheHits: 1 });
  });

  it("skips the history of a chain checked under the policy, checks it otherwise", async () => {
    const cache = new FakeCache();
    const { classifier, calls } = recording();
    const checker = new InputChecker(cache);
    const history = [msg("old question"), out("old output")];
    await checker.check(
      request(classifier, DEFAULT_POLICY, { parentId: "resp_1", history, input: [msg("new")] }),
    );
    expect(calls[0]).toEqual(["old question", "old output", "new"]);
    cache.chains.set("resp_1|k", { flagged: true, categories: { bad: true }, scores: {} });
    const result = await checker.check(
      request(classifier, DEFAULT_POLICY, { parentId: "resp_1", history, input: [msg("newer")] }),
    );
    expect(calls[1]).toEqual(["newer"]);
    expect(result.verdict.flagged).toBe(true); // the chain's verdict is part of the input's
    expect(result.accounting.historyChecked).toBe(false);
  });

  it("trusts or samples items by type", async () => {
    const { classifier, calls } = recording();
    const trusting = applyOverride(DEFAULT_POLICY, { items: { function_call_output: { kind: "trust" } } });
    await new InputChecker(new FakeCache()).check(
      request(classifier, trusting, { input: [out("BAD tool"), msg("hi")] }),
    );
    expect(calls[0]).toEqual(["hi"]);
    const none = applyOverride(DEFAULT_POLICY, { items: { message: { kind: "sample", rate: 0 } } });
    const result = await new InputChecker(new FakeCache()).check(
      request(classifier, none, { input: [msg("x")] }),
    );
    expect(calls).toHaveLength(1);
    expect(result.accounting.skipped).toBe(1);
  });

  it("reports a classifier failure as an error, not a verdict, and caches nothing", async () => {
    const { classifier } = recording();
    classifier.fail = true;
    const result = await new InputChecker(new FakeCache()).check(
      request(classifier, DEFAULT_POLICY, { input: [msg("BAD")] }),
    );
    expect(result.error?.reason).toBe("error");
    expect(result.verdict.flagged).toBe(false);
    expect(result.pending).toEqual([]);
  });

  it("never caches a combined classifier's flagged verdict per text", async () => {
    const { classifier } = recording(true);
    const result = await new InputChecker(new FakeCache()).check(
      request(classifier, DEFAULT_POLICY, { input: [msg("BAD"), msg("fine")] }),
    );
    expect(result.pending.map((p) => p.verdict.flagged)).toEqual([false]);
  });
});
