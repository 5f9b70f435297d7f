/**
 * The grace window of store:false state (a socket's own window: its client's opt-in or
 * `STORE_FALSE_GRACE_MS`, src/http/client-options.ts): when a socket with a window closes, its
 * store:false responses are not deleted at once but its scope is *released* (a row in
 * `released_scopes`), and purged once its window has passed. Owns the SQL of that lifecycle; the
 * window of each scope comes from the caller (`WindowOf`, src/session/scope.ts).
 * Invariants:
 * - a response still being generated when its socket closes is deleted at release (its client can
 *   never see it complete, and nothing may chain on an unfinished response);
 * - at purge, a response that a store:false response of a live scope (open, or released within
 *   the window) builds on is handed to that scope instead of being deleted, so a chain continued
 *   from another socket never loses its history while it is continuable: a store:false response
 *   lives while the last scope that builds on it lives, plus the window;
 * - a scope's release time is its first (a second release changes nothing).
 * - once a read found no released scope, none is read again until `release` writes one: `purge`
 *   runs before every frame (scope-lifecycle.ts), and a statement per frame of a session with
 *   nothing released showed in the runtime's profile (issue #27). This class writes every row.
 * Every deletion goes through the store's one deletion (`deleteResponses`, response-deletion.ts:
 * items, value pieces, event logs, safety marks, children re-parented, history epoch bumped), in
 * the same transaction as the scope's own rows.
 * Source: https://developers.cloudflare.com/durable-objects/api/sqlite-storage-api/
 */

/** The grace window of a scope id, in ms. */
export type WindowOf = (connId: string) => number;

/** Released scopes of one session Durable Object. */
export class ReleasedScopes {
  private readonly storage: DurableObjectStorage;
  private readonly sql: SqlStorage;
  private readonly deleteResponses: (ids: readonly string[]) => number;
  /** False when `released_scopes` is known to be empty; true when it may hold rows. */
  private mayHoldRows = true;

  /**
   * @param storage the session's storage (schema version 5 or later).
   * @param deleteResponses the store's one deletion (response-deletion.ts); returns how many it
   *   deleted.
   */
  constructor(storage: DurableObjectStorage, deleteResponses: (ids: readonly string[]) => number) {
    this.storage = storage;
    this.sql = storage.sql;
    this.deleteResponses = deleteResponses;
  }

  /**
   * Starts the window of a closed socket's scope: its unfinished responses are deleted, the rest
   * stay until `purge` finds the window over. A scope that owns nothing costs one indexed read.
   * @param at release time, ms since the epoch.
   */
  release(connId: string, at: number): void {
    const owns = this.sql.exec("SELECT 1 FROM responses WHERE conn_id = ? LIMIT 1", connId).toArray();
    if (owns.length === 0 || this.isReleased(connId)) return; // no write when nothing changes
    const unfinished = this.sql
      .exec<{ id: string }>(
        "SELECT id FROM responses WHERE conn_id = ? AND status IN ('queued', 'in_progress')",
        connId,
      )
      .toArray()
      .map((row) => row.id);
    this.storage.transactionSync(() => {
      this.deleteResponses(unfinished);
      this.sql.exec(
        "INSERT INTO released_scopes (conn_id, released_at) VALUES (?, ?) ON CONFLICT(conn_id) DO NOTHING",
        connId,
        at,
      );
    });
    this.mayHoldRows = true;
  }

  /** True when `connId` was released (and not purged yet). */
  isReleased(connId: string): boolean {
    return this.sql.exec("SELECT 1 FROM released_scopes WHERE conn_id = ?", connId).toArray().length > 0;
  }

  /**
   * Purges the scopes whose window (`windowOf`) has ended by `now` (ms): their responses that a
   * live scope's store:false response builds on move to that scope, the others are deleted with
   * everything they own (their children become chain roots, as after a DELETE). Costs one read of
   * the (few) released scopes when nothing is due.
   * @returns how many responses were deleted.
   */
  purge(now: number, windowOf: WindowOf): number {
    const due = this.released()
      .filter((row) => row.released_at + windowOf(row.conn_id) <= now)
      .map((row) => row.conn_id);
    if (due.length === 0) return 0;
    let deleted = 0;
    const ids = JSON.stringify(due);
    const expired = "SELECT value FROM json_each(?1)";
    this.storage.transactionSync(() => {
      // Every ancestor of a live scope's response, with that scope as its heir.
      this.sql.exec(
        `WITH RECURSIVE up(id, heir) AS (
           SELECT parent_id, conn_id FROM responses
             WHERE conn_id IS NOT NULL AND parent_id IS NOT NULL AND conn_id NOT IN (${expired})
           UNION
           SELECT r.parent_id, up.heir FROM responses r JOIN up ON r.id = up.id
             WHERE r.parent_id IS NOT NULL
         )
         UPDATE responses SET conn_id = (SELECT heir FROM up WHERE up.id = responses.id LIMIT 1)
           WHERE conn_id IN (${expired}) AND id IN (SELECT id FROM up)`,
        ids,
      );
      const doomed = this.sql
        .exec<{ id: string }>(`SELECT id FROM responses WHERE conn_id IN (${expired})`, ids)
        .toArray()
        .map((row) => row.id);
      deleted = this.deleteResponses(doomed);
      this.sql.exec(`DELETE FROM released_scopes WHERE conn_id IN (${expired})`, ids);
    });
    return deleted;
  }

  /** When the first window of a scope not purged yet ends (ms), or null when there is none. */
  earliestEnd(windowOf: WindowOf): number | null {
    let earliest: number | null = null;
    for (const row of this.released()) {
      const end = row.released_at + windowOf(row.conn_id);
      if (earliest === null || end < earliest) earliest = end;
    }
    return earliest;
  }

  private released(): Array<{ conn_id: string; released_at: number }> {
    if (!this.mayHoldRows) return [];
    const rows = this.sql
      .exec<{ conn_id: string; released_at: number }>("SELECT conn_id, released_at FROM released_scopes")
      .toArray();
    this.mayHoldRows = rows.length > 0;
    return rows;
  }
}
