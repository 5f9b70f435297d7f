/**
 * What safety checks report (src/safety/report.ts): `response.moderation` sides in the openai
 * SDK's shape (`moderation_result` / `error`), and which turns get an accounting log line.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { ClassifierUnavailable } from "../../../src/safety/classifier.ts";
import { logAccounting, moderationResult, type TurnAccounting } from "../../../src/safety/report.ts";

const accounting = (outcome: string, calls: number): TurnAccounting => ({
  response_id: "resp_1",
  mode: "parallel",
  timing: "parallel",
  input_classifier: "rules:x",
  output_classifier: "rules:x",
  input: {
    considered: 1,
    cacheHits: 0,
    skipped: 0,
    batchSize: calls,
    calls,
    classifierMs: 0,
    checkMs: 0,
    historyChecked: false,
  },
  output: null,
  critical_path_ms: 0,
  outcome,
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("safety report", () => {
  it("renders a verdict as a moderation_result and a failure as an error", () => {
    const verdict = {
      flagged: true,
      categories: { violence: true, hate: false },
      scores: { violence: 0.9, hate: 0 },
    };
    expect(moderationResult(verdict, "omni-moderation-latest", null)).toEqual({
      type: "moderation_result",
      model: "omni-moderation-latest",
      flagged: true,
      categories: { violence: true, hate: false },
      category_scores: { violence: 0.9, hate: 0 },
      category_applied_input_types: { violence: ["text"], hate: ["text"] },
    });
    const failure = new ClassifierUnavailable("timeout", "no answer within 300 ms");
    expect(moderationResult(verdict, "m", failure)).toEqual({
      type: "error",
      code: "safety_unavailable",
      message: "no answer within 300 ms",
    });
  });

  it("logs one JSON line per notable turn (blocked, failed, or a remote call); every turn with `all`", () => {
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => lines.push(line));
    logAccounting(accounting("allowed", 1), "notable", false); // local classifier, allowed: quiet
    logAccounting(accounting("allowed", 1), "notable", true); // a remote call: logged
    logAccounting(accounting("blocked_input", 1), "notable", false);
    logAccounting(accounting("allowed", 0), "all", false);
    logAccounting(accounting("blocked_input", 1), "off", true);
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[1]!)).toMatchObject({ event: "deltagate.safety", outcome: "blocked_input" });
  });
});
