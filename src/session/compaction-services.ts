/**
 * The compaction services of a session, built from its configuration: the keys of Deltagate's own
 * compaction items (`Config.compactionKeys`), the session's tenant, and who compacts (and counts tokens)
 * for a model: its first route's `compaction` / `input_tokens` setting (src/upstream/routes.ts).
 */
import type { Config } from "../config/config.ts";
import type { CompactionServices } from "../pipeline/compaction-stage.ts";
import { type ExtensionMode, routesFor, type UpstreamRoute } from "../upstream/routes.ts";

/** The first route serving `model`, or null. */
export function firstRoute(config: Config, model: string): UpstreamRoute | null {
  return routesFor(config.routes, model)[0] ?? null;
}

/** Who compacts for `model` (Deltagate when no route serves it: the turn is refused anyway). */
export function compactionModeFor(config: Config, model: string): ExtensionMode {
  return firstRoute(config, model)?.compaction ?? "deltagate";
}

/** The compaction services of a session of `tenant()`. */
export function compactionServices(config: Config, tenant: () => string): CompactionServices {
  return {
    keys: config.compactionKeys.then((secrets) => ({ secrets })),
    tenant,
    modeFor: (model) => compactionModeFor(config, model),
  };
}
