/**
 * The one place where a turn's stages are composed. The turn engine asks `upstreamFor(turn)` once
 * per turn and gets the model's upstream wrapped by every stage, in the order listed in
 * `createTurnPipeline`:
 *
 *   route chain (innermost) → timing → safety → compaction → usage → context window → redaction (outermost)
 *
 * `open()` on the result runs outermost first: the context window fits the request, usage fills a
 * missing usage on the stream, safety checks the input and the generated output, the route chain
 * retries and falls back across the model's routes; on the way back, redaction removes secrets
 * from every error the upstream reported (it must stay last: it is the one path upstream error
 * text takes to clients, storage and logs).
 * A new stage (safety, timing, tenant limits…) is one file in this folder implementing `TurnStage`
 * (stage.ts) plus one line in the list below; nothing else changes.
 */
import type { ContextWindow } from "../context/context-window.ts";
import type { TurnSettings } from "../protocol/create-request.ts";
import type { SessionSafety } from "../safety/session-safety.ts";
import type { SecretRedactor } from "../secrets/redactor.ts";
import type { Upstream } from "../upstream/upstream.ts";
import { type CompactionServices, compactionStage } from "./compaction-stage.ts";
import { contextWindowStage } from "./context-window-stage.ts";
import { redactionStage } from "./redaction-stage.ts";
import { safetyStage } from "./safety-stage.ts";
import type { PreparedTurn, TurnStage } from "./stage.ts";
import { timingStage } from "./timing-stage.ts";
import { usageStage } from "./usage-stage.ts";

/** The per-session services the stages are built from. */
export interface PipelineServices {
  /**
   * The model's route chain: its routes with retry, then fallback, before the first event
   * (src/upstream/router.ts, src/upstream/fallback.ts).
   * A promise when the session must first confirm the credential (a tenant's own upstream key
   * past its bound, src/tenancy/tenant-upstream-key.ts).
   * With the turn's `settings`, a setting or tool type a route of the chain cannot serve is refused.
   * @throws {ApiError} 400 `model_not_found` when no route serves the model; 400 for a setting or
   *   tool type a route cannot serve (src/upstream/route-capabilities.ts).
   */
  routeChain(model: string, settings?: Partial<TurnSettings>): Upstream | Promise<Upstream>;
  /** The session's context window (src/context/context-window.ts). */
  window: ContextWindow;
  /** The session's safety checks (src/safety/session-safety.ts). */
  safety: SessionSafety;
  /** The secrets of the environment (src/secrets/redactor.ts). */
  redactor: SecretRedactor;
  /** Compaction: keys, tenant, who compacts per model (src/compaction/). */
  compaction: CompactionServices;
}

/** Builds a turn's upstream: the model's route chain wrapped by the stages, innermost first. */
export class TurnPipeline {
  private readonly source: (model: string, settings: Partial<TurnSettings>) => Upstream | Promise<Upstream>;
  private readonly stages: readonly TurnStage[];

  /**
   * @param source the innermost upstream of a model.
   * @param stages decorators, innermost first.
   */
  constructor(
    source: (model: string, settings: Partial<TurnSettings>) => Upstream | Promise<Upstream>,
    stages: readonly TurnStage[],
  ) {
    this.source = source;
    this.stages = stages;
  }

  /**
   * The upstream to open (or pre-warm) for `turn`.
   * @throws {ApiError} when the model has no route, a route cannot serve the turn's settings, or a
   *   stage rejects the turn.
   */
  async upstreamFor(turn: PreparedTurn): Promise<Upstream> {
    let upstream = await this.source(turn.request.model, turn.request);
    for (const stage of this.stages) upstream = await stage.wrap(upstream, turn);
    return upstream;
  }
}

/** The stages of every turn of a session, innermost first. Add a stage here. */
export function createTurnPipeline(services: PipelineServices): TurnPipeline {
  return new TurnPipeline(
    (model, settings) => services.routeChain(model, settings),
    [
      timingStage(), // per-stage timing of the upstream alone (turn-timer.ts)
      safetyStage(services.safety), // input and output checks (src/safety/), inside usage and window
      compactionStage(services.compaction), // compaction items, trigger, context_management (src/compaction/)
      usageStage(services.window), // a usage on every completed response (src/context/usage.ts)
      contextWindowStage(services.window), // `truncation` before anything is sent (src/context/)
      redactionStage(services.redactor), // outermost: no secret in any upstream error (src/secrets/)
    ],
  );
}
