/**
 * The compaction stage: opens the turn's compaction items (refusing ones Deltagate cannot use,
 * before anything is stored: 400 `invalid_encrypted_content`), then wraps the upstream so Deltagate's
 * own items go upstream as their summary and `compaction_trigger` / `context_management` are
 * served by whoever compacts on the route (src/compaction/compacting-upstream.ts).
 * Sits outside safety (its summarization requests are checked like any turn's) and inside usage
 * and the context window (it sees the fitted context; a synthesized response still gets a usage).
 */
import { CompactingUpstream, type CompactionPlan } from "../compaction/compacting-upstream.ts";
import { openCompactions } from "../compaction/compaction-keyring.ts";
import type { CompactionKeys } from "../compaction/compaction-token.ts";
import { currentBound } from "../context/counted-context.ts";
import { ApiError } from "../protocol/errors.ts";
import type { Json } from "../protocol/json.ts";
import type { ExtensionMode } from "../upstream/routes.ts";
import type { TurnStage } from "./stage.ts";

/** What the stage needs of the session. */
export interface CompactionServices {
  keys: CompactionKeys;
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
    message: "Compaction is not configured on this Deltagate (COMPACTION_KEY is not set).",
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

/** The compaction stage of a session. */
export function compactionStage(services: CompactionServices): TurnStage {
  return {
    name: "compaction",
    wrap: async (inner, turn) => {
      const { request, context } = turn;
      const mode = services.modeFor(request.model);
      const trigger = turn.compactionTrigger === true;
      const contextManagement = (request.context_management ?? null) as Json | null;
      let threshold = thresholdOf(contextManagement ?? undefined);
      // A context whose upper bound is under the threshold needs no count (context-window.ts does the same).
      if (threshold !== null && currentBound(context.all.counted) < threshold) threshold = null;
      const all = context.all.items;
      const hasCompaction = all.some((item) => item.type === "compaction");
      if (!hasCompaction && !trigger && contextManagement === null) return inner;
      if (mode === "deltagate" && (trigger || threshold !== null) && services.keys.secrets.length === 0) {
        throw compactionUnavailable();
      }
      const tenant = services.tenant();
      const inputStart = all.length - context.input.length;
      const plan: CompactionPlan = {
        mode,
        tenant,
        keys: services.keys,
        opened: hasCompaction
          ? await openCompactions(all, inputStart, tenant, services.keys, mode)
          : new Map(),
        model: request.model,
        threshold,
        contextManagement,
      };
      return new CompactingUpstream(inner, plan);
    },
  };
}
