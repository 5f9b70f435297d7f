/**
 * The one visibility rule of a session: may this caller, for this purpose, see this response now?
 * Every call site asks it — the engine's parent resolution (`continue`, through its
 * `mayContinue` dependency), WebSocket resumption (`resume`, ws-transport.ts), the HTTP routes
 * (`read`, http-transport.ts) and the cross-session export (`export`, transfer.ts) — so retention
 * and store:false scopes mean the same everywhere.
 * - store:true: visible for every purpose while younger than `RESPONSE_RETENTION_DAYS`
 *   (`retentionMs`), whether or not the alarm has purged it yet (it purges on its own schedule).
 * - store:false (owned by a scope, scope.ts): never readable over HTTP (OpenAI's store:false is
 *   never visible there); resumable only by its own socket (its events are not logged, only a live
 *   response can be resumed); continuable — and exportable to another session of the tenant — by
 *   its own scope, or by any WebSocket of the tenant within a grace window (`mayContinue`).
 *   Whether its scope's grace window is over is the purge's business (released-scopes.ts, run
 *   before every frame and export): what it purged is gone.
 * Invariant: a pure function of (record, caller scope, purpose, now, settings); the session checked
 * the tenant before any call (session-do.ts `admits`), and nothing else decides.
 * Source: https://platform.openai.com/docs/api-reference/responses/create (`store`),
 *   https://developers.openai.com/api/docs/guides/websocket-mode (store:false is connection-local)
 */
import type { ResponseRecord } from "../store/conversation-store.ts";
import { mayContinue } from "./scope.ts";

/** What the caller wants to do with the response. */
export type Purpose = "continue" | "resume" | "read" | "export";

/** The settings the rule depends on. */
export interface VisibilitySettings {
  /** store:true retention (`RESPONSE_RETENTION_DAYS`), ms. */
  retentionMs: number;
  /** `STORE_FALSE_GRACE_MS`: 0 keeps store:false state to its own scope. */
  storeFalseGraceMs: number;
}

/** The fields of a response the rule reads. */
export type Visible = Pick<ResponseRecord, "store" | "connId" | "createdAt">;

/**
 * Whether the caller may see `record` for `purpose` at `now`.
 * @param caller the caller's store:false scope (its socket's or HTTP request's, scope.ts; for an
 *   export, the importing scope), or null when it has none (an HTTP read by id).
 */
export function maySee(
  record: Visible,
  caller: string | null,
  purpose: Purpose,
  now: number,
  settings: VisibilitySettings,
): boolean {
  if (record.store) return record.createdAt >= now - settings.retentionMs;
  const owner = record.connId;
  if (owner === null || caller === null) return false;
  switch (purpose) {
    case "read":
      return false;
    case "resume":
      return caller === owner;
    case "continue":
    case "export":
      return mayContinue(owner, caller, settings.storeFalseGraceMs);
  }
}
