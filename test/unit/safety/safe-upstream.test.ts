/**
 * One turn's upstream under its safety checks (src/safety/safe-upstream.ts), against a scripted
 * upstream and input check that log every step in one timeline:
 * - `blocking`: the input verdict comes before the upstream is called; a flag rejects the turn
 *   (400 `moderation_blocked`) without calling it;
 * - `parallel`: the upstream is called at once, but `open()` resolves only once the verdict is
 *   in; a flag aborts the upstream request and rejects the turn;
 * - verdicts are written only when the turn is decided: at a rejection, or at the terminal event
 *   (before it is handed on), never while the stream runs; a stream that breaks keeps its input
 *   verdicts but marks no checked chain; a turn whose input check failed open marks none either.
 */
import { describe, expect, it } from "vitest";
import { ApiError } from "../../../src/protocol/errors.ts";
import { type Classifier, ClassifierUnavailable, type Verdict } from "../../../src/safety/classifier.ts";
import type { InputCheck } from "../../../src/safety/input-checker.ts";
import { DEFAULT_POLICY, type TurnPlan } from "../../../src/safety/policy.ts";
import { type SafetyTurn, safeUpstream } from "../../../src/safety/safe-upstream.ts";
import {
  type Upstream,
  UpstreamError,
  type UpstreamEvent,
  type UpstreamRequest,
} from "../../../src/upstream/upstream.ts";

const CLEAN: Verdict = { flagged: false, categories: {}, scores: {} };
const FLAGGED: Verdict = { flagged: true, categories: { marker: true }, scores: { marker: 1 } };

const classifier: Classifier = {
  id: "test-input",
  model: "test-model",
  local: true,
  combined: false,
  classify: async (texts) => texts.map(() => CLEAN),
};

const turn: SafetyTurn = {
  responseId: "resp_1",
  model: "m",
  previousResponseId: null,
  instructions: null,
  tools: null,
  moderation: null,
  history: [],
  input: [{ type: "message", role: "user", content: "hi" }],
};

function plan(timing: "blocking" | "parallel", failure: "open" | "closed"): TurnPlan {
  return {
    policy: { ...DEFAULT_POLICY, mode: timing, failure },
    inputCheck: true,
    inputBlock: true,
    timing,
    outputCheck: false,
    outputBlock: false,
    report: false,
    requestModel: null,
  };
}

function inputCheck(verdict: Verdict, error: ClassifierUnavailable | null = null): InputCheck {
  return {
    verdict,
    error,
    pending: [{ hash: "h1", verdict }],
    accounting: {
      considered: 1,
      cacheHits: 0,
      skipped: 0,
      batchSize: 1,
      calls: 1,
      classifierMs: 0,
      checkMs: 0,
      historyChecked: false,
    },
  };
}

const EVENTS: UpstreamEvent[] = [
  { type: "response.created", response: { id: "up" } },
  {
    type: "response.output_item.added",
    output_index: 0,
    item: { id: "m", type: "message", role: "assistant", content: [] },
  },
  { type: "response.output_text.delta", output_index: 0, content_index: 0, item_id: "m", delta: "Hi" },
  { type: "response.completed", response: { id: "up", status: "completed", output: [] } },
];

/** A deferred value, resolved from the test. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

interface HarnessOptions {
  timing: "blocking" | "parallel";
  /** How an input check without a verdict is treated (closed by default). */
  failure?: "open" | "closed";
  /** The upstream stream breaks after this many events. */
  breakAfter?: number;
}

/** One turn's safe upstream over scripted parts, each logging its steps to `log`. */
function harness(options: HarnessOptions) {
  const log: string[] = [];
  const verdict = deferred<InputCheck>();
  const seen: { signal: AbortSignal | null } = { signal: null };
  const inner: Upstream = {
    open: async (_request, signal) => {
      log.push("upstream open");
      seen.signal = signal;
      const [first, ...rest] = EVENTS;
      return {
        first: first!,
        rest: (async function* () {
          let sent = 1;
          for (const event of rest) {
            if (options.breakAfter !== undefined && sent >= options.breakAfter) {
              throw new UpstreamError(502, "upstream_error", "The upstream broke off.");
            }
            sent++;
            yield event;
          }
        })(),
      };
    },
  };
  const upstream = safeUpstream({
    inner,
    turn,
    plan: plan(options.timing, options.failure ?? "closed"),
    input: classifier,
    output: null,
    cache: {
      store: ({ id }, entries) => void log.push(`store ${id} ${entries.length}`),
      markChain: (id, _policy, v) => void log.push(`markChain ${id} ${v.flagged ? "flagged" : "clean"}`),
    },
    checker: {
      check: () => {
        log.push("check");
        return verdict.promise;
      },
    },
    log: "off",
  });
  return { log, verdict, seen, upstream };
}

const request = {} as UpstreamRequest;
const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

/** Reads the whole stream, logging each event as the consumer receives it. */
async function drain(upstream: Upstream, log: string[]): Promise<void> {
  const stream = await upstream.open(request, new AbortController().signal);
  log.push(`event ${stream.first.type}`);
  for await (const event of stream.rest) log.push(`event ${event.type}`);
}

describe("SafeUpstream", () => {
  it("blocking: the input verdict comes before the upstream is called", async () => {
    const h = harness({ timing: "blocking" });
    const draining = drain(h.upstream, h.log);
    await tick();
    expect(h.log).toEqual(["check"]); // the upstream is not called while the check runs
    h.log.push("verdict");
    h.verdict.resolve(inputCheck(CLEAN));
    await draining;
    expect(h.log).toEqual([
      "check",
      "verdict",
      "upstream open",
      "event response.created",
      "event response.output_item.added",
      "event response.output_text.delta",
      "store test-input 1",
      "markChain resp_1 clean",
      "event response.completed",
    ]);
  });

  it("blocking: a flagged input rejects the turn without calling the upstream; its verdicts are cached", async () => {
    const h = harness({ timing: "blocking" });
    const opening = h.upstream.open(request, new AbortController().signal);
    h.verdict.resolve(inputCheck(FLAGGED));
    const error = await opening.catch((cause: unknown) => cause);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 400, code: "moderation_blocked" });
    expect(h.log).toEqual(["check", "store test-input 1"]);
  });

  it("parallel: the upstream is called at once, and open() resolves only once the verdict is in", async () => {
    const h = harness({ timing: "parallel" });
    let opened = false;
    const opening = h.upstream.open(request, new AbortController().signal).then((stream) => {
      opened = true;
      return stream;
    });
    await tick();
    expect(h.log).toEqual(["upstream open", "check"]);
    expect(opened).toBe(false); // the first event is there, but nothing is handed on before the verdict
    h.verdict.resolve(inputCheck(CLEAN));
    const stream = await opening;
    expect(stream.first.type).toBe("response.created");
    expect(h.log).toEqual(["upstream open", "check"]); // nothing written before the terminal event
  });

  it("parallel: a flagged input aborts the upstream request and rejects the turn", async () => {
    const h = harness({ timing: "parallel" });
    const opening = h.upstream.open(request, new AbortController().signal);
    await tick();
    h.verdict.resolve(inputCheck(FLAGGED));
    const error = await opening.catch((cause: unknown) => cause);
    expect(error).toMatchObject({ status: 400, code: "moderation_blocked" });
    expect(h.seen.signal?.aborted).toBe(true);
    expect(h.log).toEqual(["upstream open", "check", "store test-input 1"]);
  });

  it("parallel: writes the verdicts and the checked chain at the terminal event, before handing it on", async () => {
    const h = harness({ timing: "parallel" });
    h.verdict.resolve(inputCheck(CLEAN));
    await drain(h.upstream, h.log);
    expect(h.log).toEqual([
      "upstream open",
      "check",
      "event response.created",
      "event response.output_item.added",
      "event response.output_text.delta",
      "store test-input 1",
      "markChain resp_1 clean",
      "event response.completed",
    ]);
  });

  it("a stream that breaks keeps its input verdicts but marks no checked chain", async () => {
    const h = harness({ timing: "parallel", breakAfter: 2 });
    h.verdict.resolve(inputCheck(CLEAN));
    const error = await drain(h.upstream, h.log).catch((cause: unknown) => cause);
    expect(error).toMatchObject({ status: 502, code: "upstream_error" });
    expect(h.log).toEqual([
      "upstream open",
      "check",
      "event response.created",
      "event response.output_item.added",
      "store test-input 1",
    ]);
  });

  it("an input check without a verdict rejects the turn when failing closed; its verdicts are cached", async () => {
    const h = harness({ timing: "parallel" });
    h.verdict.resolve(inputCheck(CLEAN, new ClassifierUnavailable("timeout", "no answer")));
    const error = await h.upstream
      .open(request, new AbortController().signal)
      .catch((cause: unknown) => cause);
    expect(error).toMatchObject({ status: 503, code: "safety_unavailable" });
    expect(h.seen.signal?.aborted).toBe(true);
    expect(h.log).toEqual(["upstream open", "check", "store test-input 1"]);
  });

  it("an input check that failed open lets the turn through but marks no checked chain", async () => {
    const h = harness({ timing: "blocking", failure: "open" });
    h.verdict.resolve(inputCheck(CLEAN, new ClassifierUnavailable("timeout", "no answer")));
    await drain(h.upstream, h.log);
    expect(h.log.filter((step) => !step.startsWith("event "))).toEqual([
      "check",
      "upstream open",
      "store test-input 1",
    ]);
    expect(h.log.at(-1)).toBe("event response.completed");
  });
});
