/**
 * Safety policy: what is checked, by which classifier, when, and what a failure or a flag does.
 * One override format (`PolicyOverride`, snake_case JSON) serves every level — the deployment
 * (`SAFETY`; the deprecated `SAFETY_MODE` on top of it), a route (`UPSTREAMS[].safety`) and a tenant (`SAFETY_TENANTS`) —
 * merged in that order, so the most specific level wins. Owns the per-turn plan that combines the
 * policy with a request's own `moderation` parameter.
 * Invariants: a request's `moderation` can add checks, reporting and blocking but never remove
 * the deployment's (its `score` mode does not switch off Deltagate's blocking); `off` with a
 * silent request does nothing at all.
 * Source: https://platform.openai.com/docs/api-reference/responses/create (`moderation`).
 */
import { z } from "zod";
import { MAX_TEXT_CHARS } from "./content.ts";

/** When input checks run relative to the upstream call. */
export const SAFETY_MODES = ["off", "blocking", "parallel"] as const;
/** One of `SAFETY_MODES`. */
export type SafetyMode = (typeof SAFETY_MODES)[number];

/** The classifiers Deltagate can use. */
export const CLASSIFIER_KINDS = ["rules", "moderation", "llama-guard"] as const;
/** One of `CLASSIFIER_KINDS`. */
export type ClassifierKind = (typeof CLASSIFIER_KINDS)[number];

/** What input checks do with items of one type. */
export type ItemCheck = { kind: "check" } | { kind: "trust" } | { kind: "sample"; rate: number };

/** A resolved policy. */
export interface SafetyPolicy {
  mode: SafetyMode;
  /** Classifier of input checks. */
  classifier: ClassifierKind;
  /** Classifier of output checks, or "none" (no output checks). */
  outputClassifier: ClassifierKind | "none";
  /** A classifier error, timeout or unusable answer: `closed` rejects, `open` lets the turn through. */
  failure: "closed" | "open";
  /** Longest wait for one classifier call, ms. */
  timeoutMs: number;
  /** Input checks by item type (`function_call_output`, `message`…); unlisted types are checked. */
  items: Readonly<Record<string, ItemCheck>>;
  /** Output checks with a remote classifier: characters per window (a sentence end also closes one). */
  windowChars: number;
  /** Output checks with a remote classifier: characters held back behind the checked text. */
  holdBackChars: number;
  /** Emit a `deltagate.safety` event (the turn's accounting) before each terminal event. */
  reportEvents: boolean;
  /**
   * Cross-session micro-batching of remote classifier calls in one isolate: longest wait, ms
   * (0 = off), and most texts per batch (src/safety/classifiers/batching.ts).
   */
  batchWaitMs: number;
  batchMaxTexts: number;
}

/** The built-in policy: parallel input checks and output checks by the local rules classifier. */
export const DEFAULT_POLICY: SafetyPolicy = {
  mode: "parallel",
  classifier: "rules",
  outputClassifier: "rules",
  failure: "closed",
  timeoutMs: 2_000,
  items: {},
  windowChars: 200,
  holdBackChars: 32,
  reportEvents: false,
  batchWaitMs: 0,
  batchMaxTexts: 32,
};

const itemCheck = z
  .string()
  .regex(/^(check|trust|sample:(0(\.\d+)?|1(\.0+)?))$/, 'expected "check", "trust" or "sample:<0..1>"')
  .transform((value): ItemCheck => {
    if (value === "check" || value === "trust") return { kind: value };
    return { kind: "sample", rate: Number(value.slice("sample:".length)) };
  });

/** The override format of every level (all fields optional). */
export const policyOverrideSchema = z.strictObject({
  mode: z.enum(SAFETY_MODES).optional(),
  classifier: z.enum(CLASSIFIER_KINDS).optional(),
  output_classifier: z.enum([...CLASSIFIER_KINDS, "none"]).optional(),
  failure: z.enum(["closed", "open"]).optional(),
  timeout_ms: z.number().int().min(1).max(60_000).optional(),
  items: z.record(z.string().min(1), itemCheck).optional(),
  window_chars: z.number().int().min(1).max(MAX_TEXT_CHARS).optional(),
  hold_back_chars: z.number().int().min(0).max(4_096).optional(),
  report_events: z.boolean().optional(),
  batch_wait_ms: z.number().int().min(0).max(50).optional(),
  batch_max_texts: z.number().int().min(1).max(256).optional(),
});
/** A parsed override. */
export type PolicyOverride = z.infer<typeof policyOverrideSchema>;

/**
 * Parses one override.
 * @param where names the setting in the error (`SAFETY`, `UPSTREAMS[2].safety`…).
 * @throws {Error} naming the setting and field when it is invalid.
 */
export function parseOverride(raw: unknown, where: string): PolicyOverride {
  const parsed = policyOverrideSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${where} is invalid at ${issue?.path.join(".") || "?"}: ${issue?.message ?? "unknown"}`);
  }
  return parsed.data;
}

/**
 * `base` with `override` applied. Changing the input classifier also changes the output
 * classifier unless the override names one (one classifier is the simple policy).
 */
export function applyOverride(base: SafetyPolicy, override: PolicyOverride | undefined): SafetyPolicy {
  if (!override) return base;
  return {
    mode: override.mode ?? base.mode,
    classifier: override.classifier ?? base.classifier,
    outputClassifier:
      override.output_classifier ??
      (override.classifier !== undefined && base.outputClassifier !== "none"
        ? override.classifier
        : base.outputClassifier),
    failure: override.failure ?? base.failure,
    timeoutMs: override.timeout_ms ?? base.timeoutMs,
    items: { ...base.items, ...override.items },
    windowChars: override.window_chars ?? base.windowChars,
    holdBackChars: override.hold_back_chars ?? base.holdBackChars,
    reportEvents: override.report_events ?? base.reportEvents,
    batchWaitMs: override.batch_wait_ms ?? base.batchWaitMs,
    batchMaxTexts: override.batch_max_texts ?? base.batchMaxTexts,
  };
}

/** A request's `moderation` parameter (OpenAI's shape). */
export interface RequestModeration {
  model: string;
  policy?:
    | {
        input?: { mode: "score" | "block" } | null | undefined;
        output?: { mode: "score" | "block" } | null | undefined;
      }
    | null
    | undefined;
}

/** What one turn does. */
export interface TurnPlan {
  policy: SafetyPolicy;
  /** Check the turn's new input (and what of its history was never checked). */
  inputCheck: boolean;
  /** A flagged input rejects the turn. */
  inputBlock: boolean;
  /** Input checks before the upstream call, or alongside it with the output held back. */
  timing: "blocking" | "parallel";
  outputCheck: boolean;
  /** A flagged output ends the response `incomplete` (`content_filter`). */
  outputBlock: boolean;
  /** Report results as `response.moderation` (the request asked for them). */
  report: boolean;
  /** The request's moderation model (used by the moderation classifier), or null. */
  requestModel: string | null;
}

/**
 * The plan of one turn under `policy`, given the request's `moderation` parameter.
 * @returns null when nothing is checked (mode `off` and a silent request).
 */
export function planTurn(
  policy: SafetyPolicy,
  moderation: RequestModeration | null | undefined,
): TurnPlan | null {
  const active = policy.mode !== "off";
  if (!active && !moderation) return null;
  const outputByPolicy = active && policy.outputClassifier !== "none";
  return {
    policy,
    inputCheck: true,
    inputBlock: active || moderation?.policy?.input?.mode === "block",
    timing: policy.mode === "blocking" ? "blocking" : "parallel",
    outputCheck: outputByPolicy || Boolean(moderation),
    outputBlock: outputByPolicy || moderation?.policy?.output?.mode === "block",
    report: Boolean(moderation),
    requestModel: moderation?.model ?? null,
  };
}

/** The input check of items of `type` under `policy`. */
export function itemCheckFor(policy: SafetyPolicy, type: string): ItemCheck {
  return policy.items[type] ?? { kind: "check" };
}
