/**
 * The remote classifiers' strict answer reading and the failure policy's inputs
 * (src/safety/classifiers/moderation.ts, llama-guard.ts, classifier.ts): every error, timeout or
 * unusable answer is `ClassifierUnavailable` with its reason, never a verdict. Llama Guard runs
 * against a stand-in `AI` binding (Workers AI has no local runtime). Cross-session batching
 * (batching.ts) joins concurrent calls into one.
 */
import { describe, expect, it, vi } from "vitest";
import {
  type Classifier,
  ClassifierUnavailable,
  classifyWithin,
  type Verdict,
} from "../../../src/safety/classifier.ts";
import { BatchingClassifier } from "../../../src/safety/classifiers/batching.ts";
import { LlamaGuardClassifier, parseLlamaGuard } from "../../../src/safety/classifiers/llama-guard.ts";
import { ModerationClassifier } from "../../../src/safety/classifiers/moderation.ts";

function moderationWith(answer: () => Response | Promise<Response>) {
  const requests: Array<{ url: string; body: unknown; auth: string | null }> = [];
  const fetch = (async (url: string, init: RequestInit) => {
    requests.push({
      url,
      body: JSON.parse(String(init.body)),
      auth: new Headers(init.headers).get("authorization"),
    });
    return answer();
  }) as unknown as typeof globalThis.fetch;
  const classifier = new ModerationClassifier({
    baseUrl: "http://mod.test/v1",
    apiKey: "secret",
    model: "m1",
    fetch,
  });
  return { classifier, requests };
}

const result = (flagged: boolean) => ({
  flagged,
  categories: { violence: flagged },
  category_scores: { violence: 0.5 },
});

async function failure(promise: Promise<unknown>): Promise<ClassifierUnavailable> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ClassifierUnavailable);
  return error as ClassifierUnavailable;
}

describe("moderation classifier", () => {
  it("sends every text in one request and reads one result per text", async () => {
    const { classifier, requests } = moderationWith(() =>
      Response.json({ results: [result(false), result(true)] }),
    );
    const verdicts = await classifyWithin(classifier, ["a", "b"], "input", 1_000);
    expect(verdicts.map((v) => v.flagged)).toEqual([false, true]);
    expect(requests).toEqual([
      {
        url: "http://mod.test/v1/moderations",
        body: { model: "m1", input: ["a", "b"] },
        auth: "Bearer secret",
      },
    ]);
    expect(classifier.withModel("m2").id).not.toBe(classifier.id);
  });

  it("an HTTP error, a non-JSON body or a wrong result count is unavailable, never a verdict", async () => {
    const cases: Array<[() => Response, string]> = [
      [() => new Response("oops", { status: 500 }), "error"],
      [() => new Response("<html>", { status: 200 }), "unparseable"],
      [() => Response.json({ results: [result(false)] }), "unparseable"],
      [() => Response.json({ results: [{ flagged: "yes" }, result(false)] }), "unparseable"],
    ];
    for (const [answer, reason] of cases) {
      const { classifier } = moderationWith(answer);
      const error = await failure(classifyWithin(classifier, ["a", "b"], "input", 1_000));
      expect(error.reason).toBe(reason);
      expect(error.message).not.toContain("secret");
    }
  });

  it("times out", async () => {
    const { classifier } = moderationWith(() => new Promise<Response>(() => {}));
    expect((await failure(classifyWithin(classifier, ["a"], "input", 20))).reason).toBe("timeout");
  });
});

describe("classifyWithin", () => {
  const local = (answer: () => Promise<Verdict[]>): Classifier => ({
    id: "local:test",
    model: "test",
    local: true,
    combined: false,
    classify: answer,
  });
  const clean: Verdict = { flagged: false, categories: {}, scores: {} };

  it("puts no timer around a local classifier, which answers without I/O (issue #27)", async () => {
    const timers = vi.spyOn(globalThis, "setTimeout");
    try {
      expect(
        await classifyWithin(
          local(async () => [clean]),
          ["a"],
          "output",
          1_000,
        ),
      ).toEqual([clean]);
      expect(timers).not.toHaveBeenCalled();
      const { classifier } = moderationWith(() => Response.json({ results: [result(false)] }));
      await classifyWithin(classifier, ["a"], "input", 1_000);
      expect(timers).toHaveBeenCalled();
    } finally {
      timers.mockRestore();
    }
  });

  it("a local classifier's failure or wrong count is unavailable too, even when it throws at once", async () => {
    const throwsAtOnce = local(() => {
      throw new Error("boom");
    });
    expect((await failure(classifyWithin(throwsAtOnce, ["a"], "input", 1_000))).reason).toBe("error");
    const short = local(async () => []);
    expect((await failure(classifyWithin(short, ["a"], "input", 1_000))).reason).toBe("unparseable");
  });
});

describe("llama guard classifier (stand-in AI binding)", () => {
  it("sends one conversation per call and reads the JSON answer", async () => {
    const calls: Array<{ model: string; inputs: Record<string, unknown> }> = [];
    const ai = {
      run: async (model: string, inputs: Record<string, unknown>) => {
        calls.push({ model, inputs });
        return { response: { safe: false, categories: ["S1", "S10"] } };
      },
    };
    const guard = new LlamaGuardClassifier(ai);
    const verdicts = await classifyWithin(guard, ["one", "two"], "output", 1_000);
    expect(verdicts).toHaveLength(2);
    expect(verdicts[0]).toEqual({
      flagged: true,
      categories: { S1: true, S10: true },
      scores: { S1: 1, S10: 1 },
    });
    expect(calls).toHaveLength(1);
    expect(calls[0]?.model).toBe("@cf/meta/llama-guard-3-8b");
    expect(calls[0]?.inputs).toMatchObject({
      response_format: { type: "json_object" },
      messages: [{ role: "user" }, { role: "assistant", content: expect.stringContaining("one") }],
    });
    expect(guard.combined).toBe(true);
  });

  it("reads the plain-text form and rejects anything else", async () => {
    expect(parseLlamaGuard("safe")).toEqual({ safe: true, categories: [] });
    expect(parseLlamaGuard("unsafe\nS2,S11")).toEqual({ safe: false, categories: ["S2", "S11"] });
    expect(parseLlamaGuard("maybe")).toBeNull();
    expect(parseLlamaGuard({ safe: "no" })).toBeNull();
    const broken = new LlamaGuardClassifier({ run: async () => ({ response: "I cannot answer that" }) });
    expect((await failure(classifyWithin(broken, ["x"], "input", 1_000))).reason).toBe("unparseable");
    const down = new LlamaGuardClassifier({ run: async () => Promise.reject(new Error("3040: capacity")) });
    expect((await failure(classifyWithin(down, ["x"], "input", 1_000))).reason).toBe("error");
    const slow = new LlamaGuardClassifier({ run: () => new Promise(() => {}) });
    expect((await failure(classifyWithin(slow, ["x"], "input", 20))).reason).toBe("timeout");
  });
});

describe("cross-session batching", () => {
  it("joins concurrent calls within the wait into one call and splits the verdicts back", async () => {
    const calls: string[][] = [];
    const inner: Classifier = {
      id: `batch-test-${Math.random()}`,
      model: "m",
      local: false,
      combined: false,
      classify: async (texts) => {
        calls.push([...texts]);
        return texts.map((t): Verdict => ({ flagged: t.startsWith("bad"), categories: {}, scores: {} }));
      },
    };
    const batched = new BatchingClassifier(inner, 10, 32);
    const [a, b] = await Promise.all([
      classifyWithin(batched, ["ok1", "bad1"], "input", 1_000),
      classifyWithin(batched, ["bad2"], "input", 1_000),
    ]);
    expect(calls).toEqual([["ok1", "bad1", "bad2"]]);
    expect(a.map((v) => v.flagged)).toEqual([false, true]);
    expect(b.map((v) => v.flagged)).toEqual([true]);
  });
});
