/**
 * Cross-session transfer: a chain may continue from any session of its tenant, so a
 * `previous_response_id` owned by another session Durable Object (its id is embedded in the
 * response id, src/util/ids.ts) is copied into this one before the turn: the owner exports the
 * response (record, flattened history, output, safety chain marks), this session imports it.
 * Owns the export's content, its wire form and the import's rows.
 * Invariants: the owner exports only what the one visibility rule lets the importing scope
 * `export` (visibility.ts: store:true within retention; store:false only to a WebSocket of the
 * tenant within the grace window) and only finished responses; an imported response is a root
 * here (its history is its input), keeps its creation time (retention counts from the original)
 * and stays store:false when it was, owned by the importing scope; an unreachable owner or an
 * unknown id is "not found", never an error.
 */
import type { TurnScope } from "../engine/turn-engine.ts";
import type { StoredItem } from "../protocol/items.ts";
import type { ChainRow } from "../safety/verdict-cache.ts";
import type { ConversationStore, ResponseRecord } from "../store/conversation-store.ts";
import { responseOwner } from "../util/ids.ts";
import { maySee, type VisibilitySettings } from "./visibility.ts";

/** A response copied between sessions: its record, flattened history and output. */
interface ExportedResponse {
  record: ResponseRecord;
  /** history(parent) + the response's own input, oldest first. */
  input: StoredItem[];
  output: StoredItem[];
  /** Policies its chain was safety-checked under (src/safety/verdict-cache.ts). */
  safety?: ChainRow[];
}

/** Collaborators of the transfer. */
export interface TransferDeps {
  store: ConversationStore;
  /** The session's safety chain marks (src/safety/session-safety.ts). */
  safety: {
    exportChain(responseId: string): ChainRow[];
    importChain(responseId: string, rows: readonly ChainRow[]): void;
  };
  /** Hex id of this session Durable Object. */
  ownerId: string;
  visibility: VisibilitySettings;
  now(): number;
  /** Deletes store:false state whose grace window has ended (scope-lifecycle.ts), before an export. */
  purgeEnded(): void;
  /**
   * Asks the session Durable Object `owner` for its export of `responseId` (its
   * `exportResponse` RPC method). Throws when `owner` is not an id of the namespace.
   */
  exportFrom(owner: string, responseId: string, tenant: string, importer: string): Promise<string | null>;
}

/** Exports and imports responses of one session. */
export class ResponseTransfer {
  private readonly deps: TransferDeps;

  constructor(deps: TransferDeps) {
    this.deps = deps;
  }

  /**
   * The export of `id` for the scope `importer` of another session of the tenant (the tenant is
   * checked by the caller), as JSON text — RPC's structural types recurse too deeply on JSON
   * values — or null when it is unknown, not visible to `importer`, or still running.
   */
  exportJson(id: string, importer: string): string | null {
    this.deps.purgeEnded(); // a late alarm must not stretch a grace window
    const { store, visibility } = this.deps;
    const record = store.get(id);
    if (!record || !maySee(record, importer, "export", this.deps.now(), visibility)) return null;
    if (record.status === "in_progress" || record.status === "queued") return null;
    const history = record.parentId ? store.history(record.parentId) : [];
    const exported: ExportedResponse = {
      record,
      input: [...history, ...store.items(id, "input")],
      output: store.items(id, "output"),
      safety: this.deps.safety.exportChain(id),
    };
    return JSON.stringify(exported);
  }

  /**
   * Imports `id` from the session Durable Object that owns it, for `scope`.
   * @returns whether the response is here now (imported, or found already).
   */
  async importRemote(id: string, scope: TurnScope): Promise<boolean> {
    const { store } = this.deps;
    const owner = responseOwner(id);
    if (!owner || owner === this.deps.ownerId) return false;
    let exported: ExportedResponse | null;
    try {
      const text = await this.deps.exportFrom(owner, id, scope.tenant, scope.connId);
      exported = text === null ? null : (JSON.parse(text) as ExportedResponse);
    } catch {
      return false; // not an id of this namespace, or the owner is unreachable: treat as not found
    }
    if (!exported || store.get(id)) return store.get(id) !== null;
    const { record, input, output } = exported;
    const connId = record.store ? null : scope.connId;
    store.create({ ...record, parentId: null, connId, status: "in_progress" }, input);
    store.finish(
      id,
      {
        status: record.status === "in_progress" || record.status === "queued" ? "failed" : record.status,
        output,
        usage: record.usage,
        error: record.error,
        incompleteDetails: record.incompleteDetails,
        completedAt: record.completedAt ?? this.deps.now(),
      },
      null,
    );
    this.deps.safety.importChain(id, exported.safety ?? []);
    return true;
  }
}
