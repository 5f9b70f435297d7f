/**
 * The safety checks of one session Durable Object: its classifiers, its verdict cache and input
 * checker, and the per-turn decision of what to wrap. The turn pipeline's safety stage
 * (src/pipeline/safety-stage.ts) calls `wrap` once per turn; the session Durable Object carries
 * checked chains along when a response is exported to another session of the tenant.
 * Invariant: a turn whose plan is empty (mode `off`, silent request) gets its upstream back
 * untouched — safety off costs nothing.
 */
import type { Upstream } from "../upstream/upstream.ts";
import type { Classifier } from "./classifier.ts";
import { BatchingClassifier } from "./classifiers/batching.ts";
import { type AiBinding, LlamaGuardClassifier } from "./classifiers/llama-guard.ts";
import { ModerationClassifier } from "./classifiers/moderation.ts";
import { RulesClassifier } from "./classifiers/rules.ts";
import { policyFor, type SafetySettings } from "./config.ts";
import { InputChecker } from "./input-checker.ts";
import { type ClassifierKind, planTurn, type SafetyPolicy } from "./policy.ts";
import type { SafetyLog } from "./report.ts";
import { type SafetyTurn, safeUpstream } from "./safe-upstream.ts";
import { type ChainRow, VerdictCache } from "./verdict-cache.ts";

/** Collaborators of a session's safety checks. */
export interface SessionSafetyDeps {
  settings: SafetySettings;
  sql: SqlStorage;
  /** The tenant owning the session (null before its first request). */
  tenant(): string | null;
  /** The Workers AI binding, when configured (Llama Guard). */
  ai: AiBinding | null;
  /** `fetch` for the moderation endpoint (defaults to the global). */
  fetch?: typeof fetch;
}

/** Safety checks of one session. */
export class SessionSafety {
  readonly cache: VerdictCache;
  readonly checker: InputChecker;
  readonly log: SafetyLog;
  private readonly deps: SessionSafetyDeps;
  private readonly rules: RulesClassifier;
  private readonly moderation: ModerationClassifier;
  private readonly llamaGuard: LlamaGuardClassifier | null;

  constructor(deps: SessionSafetyDeps) {
    this.deps = deps;
    this.log = deps.settings.log;
    this.cache = new VerdictCache(deps.sql);
    this.checker = new InputChecker(this.cache);
    const { rules, moderation, llamaGuardModel } = deps.settings;
    this.rules = new RulesClassifier(rules);
    this.moderation = new ModerationClassifier({
      ...moderation,
      ...(deps.fetch ? { fetch: deps.fetch } : {}),
    });
    this.llamaGuard = deps.ai ? new LlamaGuardClassifier(deps.ai, llamaGuardModel) : null;
  }

  /** `inner` wrapped with the checks `turn` needs (or unchanged when it needs none). */
  wrap(inner: Upstream, turn: SafetyTurn): Upstream {
    const policy = policyFor(this.deps.settings, turn.model, this.deps.tenant());
    const plan = planTurn(policy, turn.moderation);
    if (!plan) return inner;
    const input = this.classifier(policy.classifier, plan.requestModel, policy);
    const outputKind = policy.outputClassifier === "none" ? policy.classifier : policy.outputClassifier;
    const output = plan.outputCheck ? this.classifier(outputKind, plan.requestModel, policy) : null;
    const { cache, checker, log } = this;
    return safeUpstream({ inner, turn, plan, input, output, cache, checker, log });
  }

  /** Chain rows of `responseId`, for an export to another session of the tenant. */
  exportChain(responseId: string): ChainRow[] {
    return this.cache.exportChain(responseId);
  }

  /** Chain rows exported by another session, for the response just imported. */
  importChain(responseId: string, rows: readonly ChainRow[]): void {
    this.cache.importChain(responseId, rows);
  }

  /** The classifier of `kind` (the request's moderation model for the moderation endpoint). */
  private classifier(kind: ClassifierKind, requestModel: string | null, policy: SafetyPolicy): Classifier {
    let classifier: Classifier;
    if (kind === "rules") return this.rules;
    if (kind === "moderation") {
      classifier = requestModel ? this.moderation.withModel(requestModel) : this.moderation;
    } else if (this.llamaGuard) {
      classifier = this.llamaGuard;
    } else {
      throw new Error("llama-guard needs the AI binding"); // excluded by parseSafetySettings
    }
    return policy.batchWaitMs > 0
      ? new BatchingClassifier(classifier, policy.batchWaitMs, policy.batchMaxTexts)
      : classifier;
  }
}
