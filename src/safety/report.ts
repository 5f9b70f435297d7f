/**
 * What a turn's safety checks report: `response.moderation` in OpenAI's shape (for requests that
 * sent the `moderation` parameter), and the per-turn accounting (items checked, cache hits, batch
 * size, classifier time, time on the critical path) as a structured log line and, when the policy
 * asks (`report_events`), as a `deltagate.safety` event before the terminal event — the hook a
 * benchmark or the per-stage timing reads.
 * Source: the openai SDK's `Response.moderation` (`moderation_result` / `error` objects),
 *   node_modules/openai/resources/responses/responses.d.ts.
 */
import type { Json } from "../protocol/json.ts";
import type { ClassifierUnavailable, Verdict } from "./classifier.ts";
import type { InputAccounting } from "./input-checker.ts";
import type { OutputAccounting } from "./output-guard.ts";

/** One side of `response.moderation`: a result or the error that prevented it. */
export function moderationResult(
  verdict: Verdict,
  model: string,
  error: ClassifierUnavailable | null,
): { [field: string]: Json } {
  if (error) return { type: "error", code: "safety_unavailable", message: error.message };
  const applied: Record<string, Json> = {};
  for (const name of Object.keys(verdict.categories)) applied[name] = ["text"];
  return {
    type: "moderation_result",
    model,
    flagged: verdict.flagged,
    categories: verdict.categories,
    category_scores: verdict.scores,
    category_applied_input_types: applied,
  };
}

/** The accounting of one turn. Times are ms. */
export interface TurnAccounting {
  response_id: string;
  mode: string;
  timing: "blocking" | "parallel";
  input_classifier: string;
  output_classifier: string | null;
  input: InputAccounting | null;
  output: OutputAccounting | null;
  /**
   * Time safety added before the upstream's first event could go out: the whole input check in
   * `blocking` mode; in `parallel` mode only how long the verdict came after that first event.
   */
  critical_path_ms: number;
  /** `allowed`, `blocked_input`, `blocked_output`, `unavailable` or `failed_open`. */
  outcome: string;
}

/** Which turns get a log line. */
export type SafetyLog = "all" | "notable" | "off";

/**
 * Logs one turn's accounting as a JSON line (`{"event":"deltagate.safety",…}`): every turn with
 * `all`; with `notable` only turns that called a remote classifier, were blocked or failed.
 */
export function logAccounting(accounting: TurnAccounting, level: SafetyLog, remote: boolean): void {
  if (level === "off") return;
  const calls = (accounting.input?.calls ?? 0) + (accounting.output?.calls ?? 0);
  const notable = accounting.outcome !== "allowed" || (remote && calls > 0);
  if (level === "all" || notable) console.log(JSON.stringify({ event: "deltagate.safety", ...accounting }));
}
