/**
 * The one deletion of responses in a session Durable Object's SQLite. Every path that removes a
 * response — `DELETE /v1/responses/{id}`, retention expiry, the end of a store:false scope (its
 * HTTP request, a socket without grace window, the end of the grace window) and the unfinished
 * responses of a closed socket — goes through `delete`. Owns what a response takes with it and
 * what it leaves:
 * - its items, the pieces of its values too large for one row (large-values.ts), its event log
 *   (event-log-store.ts), and every row a higher layer keys by its id (`ResponseDependent`,
 *   registered by the session: the safety checks' chain marks, src/safety/verdict-cache.ts — the
 *   store does not import the layers above it, they hand it their deletion);
 * - its children become the roots of their chains (their history no longer holds anything
 *   before them; src/engine/history-repair.ts handles what that leaves behind);
 * - the history epoch is bumped (conversation-store.ts `historyEpoch`: in-memory history caches).
 * Invariant: all of it in one transaction (nested in the caller's when it runs in one), so no
 * reader ever sees a response without its items or a row of a response that is gone; after
 * `delete`, no table holds a row keyed by a deleted id.
 * Source: https://developers.cloudflare.com/durable-objects/api/sqlite-storage-api/ (`transactionSync`)
 */
import type { EventLogStore } from "./event-log-store.ts";
import type { LargeValueStore } from "./large-values.ts";

/** Rows of a higher layer keyed by response id, deleted with their responses. */
export interface ResponseDependent {
  /** Deletes its rows of these responses (called inside the deleting transaction). */
  forgetResponses(responseIds: readonly string[]): void;
}

/** Collaborators of the deletion: the stores of the rows a response owns. */
export interface ResponseDeletionDeps {
  storage: DurableObjectStorage;
  large: LargeValueStore;
  eventLogs: EventLogStore;
  /** Bumps the store's history epoch; called before anything is deleted or re-parented. */
  bumpEpoch(): void;
}

/** Deletes responses with everything they own. */
export class ResponseDeletion {
  private readonly deps: ResponseDeletionDeps;
  private readonly dependents: ResponseDependent[] = [];

  constructor(deps: ResponseDeletionDeps) {
    this.deps = deps;
  }

  /** Registers rows of a higher layer to delete with their responses. */
  addDependent(dependent: ResponseDependent): void {
    this.dependents.push(dependent);
  }

  /**
   * Deletes the responses `ids` (unknown ids are ignored) with their items, value pieces, event
   * logs and dependents' rows; their children become chain roots. Nothing is written, and the
   * epoch stays, when `ids` is empty.
   * @returns how many responses were deleted.
   */
  delete(ids: readonly string[]): number {
    if (ids.length === 0) return 0;
    const { storage, large, eventLogs } = this.deps;
    const sql = storage.sql;
    this.deps.bumpEpoch();
    let deleted = 0;
    storage.transactionSync(() => {
      for (const id of ids) {
        sql.exec("UPDATE responses SET parent_id = NULL WHERE parent_id = ?", id); // responses_by_parent
        sql.exec("DELETE FROM items WHERE response_id = ?", id);
        large.deleteResponse(id);
        deleted += sql.exec("DELETE FROM responses WHERE id = ?", id).rowsWritten;
      }
      eventLogs.delete(ids);
      for (const dependent of this.dependents) dependent.forgetResponses(ids);
    });
    return deleted;
  }
}
