/**
 * Warm-on-connect: when a client socket connects, open the upstream connection of the session's
 * likely route — the model the client announced, else the model of the session's latest turn,
 * else the first advertised model (`MODELS`) — so the first turn pays no connection setup. Only
 * adapters with a connection of their own do anything (Responses WebSocket mode); the warm socket
 * is then kept warm by `ClientPresence` (src/upstream/client-presence.ts).
 * Invariants: warming never fails a connect (an unknown model or a refused upstream is left to
 * the first turn to report); the latest warm-up of each Durable Object is observable through its
 * `DurableObjectState` (`upstreamWarmed`), not through a field of the Durable Object.
 */
import type { UpstreamRouter } from "../upstream/router.ts";

/** Longest `x-codex-turn-metadata` header read, and longest model id taken from it. */
const MAX_METADATA_CHARS = 8192;
const MAX_MODEL_CHARS = 256;

/** The latest warm-up of each Durable Object, by its state (settles once open or failed). */
const latest = new WeakMap<DurableObjectState, Promise<void>>();

/**
 * The model a client announces on its upgrade: Codex sends its turn metadata, including `model`,
 * as JSON in `x-codex-turn-metadata` (test/fixtures/codex/upgrade-headers.json). Null when absent
 * or unreadable.
 */
export function modelHint(headers: Headers): string | null {
  const raw = headers.get("x-codex-turn-metadata");
  if (!raw || raw.length > MAX_METADATA_CHARS) return null;
  try {
    const model: unknown = (JSON.parse(raw) as { model?: unknown }).model;
    return typeof model === "string" && model.length > 0 && model.length <= MAX_MODEL_CHARS ? model : null;
  } catch {
    return null;
  }
}

/** Collaborators of the warm-up. */
export interface WarmDeps {
  ctx: DurableObjectState;
  router: UpstreamRouter;
  /** The model of the session's latest turn, or null before the first. */
  lastModel(): string | null;
  /** Advertised models (`MODELS`). */
  models: readonly string[];
}

/** Opens the upstream connection of the likely route of a client that just connected. */
export function warmUpstream(deps: WarmDeps, hint: string | null): void {
  const model = hint ?? deps.lastModel() ?? deps.models[0];
  if (!model) return;
  let warming: Promise<void>;
  try {
    warming = deps.router.upstreamFor(model).preconnect?.() ?? Promise.resolve();
  } catch {
    return; // the model has no route: its first turn will say so
  }
  latest.set(deps.ctx, warming);
  deps.ctx.waitUntil(warming);
}

/** Settles once the latest warm-up of the Durable Object with this state is open or failed. */
export function upstreamWarmed(ctx: DurableObjectState): Promise<void> {
  return latest.get(ctx) ?? Promise.resolve();
}
