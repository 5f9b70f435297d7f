/**
 * The compaction stage: opens the turn's compaction items (refusing ones Deltagate cannot use,
 * before anything is stored: 400 `invalid_encrypted_content`), then wraps the upstream so Deltagate's
 * own items go upstream as their summary and `compaction_trigger` / `context_management` are
 * served by whoever compacts on the route (src/compaction/compacting-upstream.ts).
 * Sits outside safety (its summarization requests are checked like any turn's) and inside usage
 * and the context window (it sees the fitted context; a synthesized response still gets a usage).
 */
import { type CompactionPlan, compactingUpstream } from "../compaction/compacting-upstream.ts";
import { openCompactions } from "../compaction/compaction-keyring.ts";
import type { CompactionKeys } from "../compaction/compaction-token.ts";
import { currentBound, type TurnContext } from "../context/counted-context.ts";
import { ApiError } from "../protocol/errors.ts";
import type { Json } from "../protocol/json.ts";
import type { ExtensionMode } from "../upstream/routes.ts";
import type { TurnStage } from "./stage.ts";

/** What the stage needs of the session. */
export interface CompactionServices {
  /** The keys of Deltagate's compaction items (a promise: they may be derived, src/config/root-secret.ts). */
  keys: Promise<CompactionKeys>;
  /** The session's tenant (compaction items are sealed for it). */
  tenant(): string;
  /** Who compacts for `model` (its first route's `compaction`). */
  modeFor(model: string): ExtensionMode;
}

/** 503 when Deltagate should compact but has no key to seal the result with. */
export function compactionUnavailable(): ApiError {
  return new ApiError(503, {
    type: "server_error",
    code: "compaction_unavailable",
    message: "Compaction is not configured on this Deltagate (DELTAGATE_SECRET is not set).",
    param: null,
  });
}

/** The `compact_threshold` of a `context_management` compaction entry, or null. */
function thresholdOf(contextManagement: Json | undefined): number | null {
  if (!Array.isArray(contextManagement)) return null;
  for (const entry of contextManagement) {
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) continue;
    const threshold = entry.compact_threshold;
    if (entry.type === "compaction" && typeof threshold === "number" && threshold > 0) return threshold;
  }
  return null;
}

/**
 * Whether a context reaches `threshold` tokens, as far as known without the tokenizer: `yes` when
 * the upstream's own count of the history (the previous response's usage, `reportedHistory`)
 * reaches it; `no` when even the tightest upper bound (Deltagate's counts and byte bounds, or the
 * upstream's history count plus the input's bound) stays under it; else `count` (the compacting
 * upstream counts exactly). The same bounds as the context window's (context-window.ts).
 */
function thresholdDue(context: TurnContext, threshold: number): "yes" | "no" | "count" {
  const reported = context.reportedHistory;
  // After a compaction the previous response's usage measures the context before it (the
  // summarization's input), not the history now sent: only a bound then.
  const measured = reported !== null && !context.history.items.some((item) => item.type === "compaction");
  if (measured && context.history.items.length > 0 && reported >= threshold) return "yes";
  const upper = Math.min(
    currentBound(context.all.counted),
    reported === null ? Number.POSITIVE_INFINITY : reported + currentBound(context.input),
  );
  return upper < threshold ? "no" : "count";
}

/** The compaction stage of a session. */
export function compactionStage(services: CompactionServices): TurnStage {
  return {
    name: "compaction",
    wrap: async (inner, turn) => {
      const { request, context } = turn;
      const mode = services.modeFor(request.model);
      const trigger = turn.compactionTrigger === true;
      const contextManagement = (request.context_management ?? null) as Json | null;
      const threshold = thresholdOf(contextManagement ?? undefined);
      const due = threshold === null ? "no" : thresholdDue(context, threshold);
      const all = context.all.items;
      const hasCompaction = all.some((item) => item.type === "compaction");
      if (!hasCompaction && !trigger && contextManagement === null) return inner;
      const keys = await services.keys;
      if (mode === "deltagate" && (trigger || due !== "no") && keys.secrets.length === 0) {
        throw compactionUnavailable();
      }
      const tenant = services.tenant();
      const inputStart = all.length - context.input.length;
      const plan: CompactionPlan = {
        mode,
        tenant,
        keys,
        opened: hasCompaction ? await openCompactions(all, inputStart, tenant, keys, mode) : new Map(),
        model: request.model,
        threshold: due === "count" ? threshold : null,
        compactNow: due === "yes",
        contextManagement,
      };
      return compactingUpstream(inner, plan);
    },
  };
}
