/**
 * Conversation state in a session Durable Object's SQLite storage: responses and their input and
 * output items. Owns all SQL on those tables.
 * Invariants:
 * - a response's items are written in the same synchronous transaction as its status change, so a
 *   reader never sees a completed response without its output;
 * - `store:false` responses carry the owning connection id and are deleted when it closes, or
 *   when the grace window after its close ends (released-scopes.ts);
 * - cursors are read fully before any `await` (SQLite cursors lose isolation across awaits).
 * - a response's `chain` (src/resend/chain-hash.ts) is the hash of its history as written: through
 *   its input while it runs, through its output once finished; only a completed response has a
 *   resend key. A history later shortened by a deleted ancestor keeps the old hash: the matcher
 *   compares the stored item count with the history it reads (src/resend/match.ts).
 * - an item's JSON or a response's settings too long for one row is stored in pieces
 *   (large-values.ts), written in the same transaction as its row;
 * - every deletion of a response goes through the one deletion (response-deletion.ts: items,
 *   pieces, event log, dependents' rows, children re-parented, `historyEpoch` bumped — in-memory
 *   history caches depend on it); `items.tokens` caches an item's token count (counted by
 *   src/context and handed in by the caller), never its data.
 * Source: https://developers.cloudflare.com/durable-objects/api/sqlite-storage-api/
 */

import type { StoredItem } from "../protocol/items.ts";
import { isRecord, type Json } from "../protocol/json.ts";
import { utf8Length } from "../protocol/size-limits.ts";
import { Conversations } from "./conversations.ts";
import { EventLogStore } from "./event-log-store.ts";
import { LargeValueStore, SETTINGS_KIND, type StoredValue } from "./large-values.ts";
import { migrate } from "./migrations.ts";
import { ReleasedScopes } from "./released-scopes.ts";
import { ResponseDeletion, type ResponseDependent } from "./response-deletion.ts";
import { WebhookOutbox } from "./webhook-outbox.ts";

/**
 * A chain's state as stored with a response (transparent deltas, src/resend/chain-hash.ts): the
 * rolling hash of its history's items and how many there are.
 */
export interface ChainState {
  hash: string;
  items: number;
}

/** Lifecycle status of a response (https://platform.openai.com/docs/api-reference/responses/object). */
export type ResponseStatus = "queued" | "in_progress" | "completed" | "failed" | "incomplete" | "cancelled";

/** A stored response row, decoded. Times are ms since the epoch. */
export interface ResponseRecord {
  id: string;
  parentId: string | null;
  /** Owning connection for store:false responses, else null. */
  connId: string | null;
  store: boolean;
  status: ResponseStatus;
  model: string;
  /** The request's per-response settings (wire names), echoed on the Response object. */
  settings: Record<string, Json>;
  usage: Json | null;
  error: Json | null;
  incompleteDetails: Json | null;
  createdAt: number;
  completedAt: number | null;
  /** `response.moderation` results, when the request asked for them (src/safety/). */
  moderation?: Json | null;
  /**
   * True when the response continues `parentId` because its input matched that chain
   * (transparent deltas, src/resend/), not because the client named it: its Response object says
   * `previous_response_id: null`, as the client sent — or `namedParentId`.
   */
  implicitParent?: boolean;
  /**
   * With `implicitParent`: the response the client named, an empty warm-up its resend was chained
   * on (src/resend/warm-up.ts), shown as its `previous_response_id`.
   */
  namedParentId?: string | null;
  /** The rolling hash of its history (src/resend/chain-hash.ts), or null when not kept. */
  chain?: ChainState | null;
  /**
   * Created with `background: true` (docs/background.md): announced `queued`, never cancelled for
   * want of a client, announced by a webhook when it ends.
   */
  background?: boolean;
  /**
   * The conversation the turn continued (`conversation` on create, docs/conversations.md): its
   * Response's `conversation`; its input and output are appended to it when it completes.
   */
  conversationId?: string | null;
}

interface ResponseRow extends Record<string, SqlStorageValue> {
  id: string;
  parent_id: string | null;
  conn_id: string | null;
  store: number;
  status: string;
  model: string;
  settings: string;
  settings_pieces: number;
  usage: string | null;
  error: string | null;
  incomplete_details: string | null;
  created_at: number;
  completed_at: number | null;
  moderation: string | null;
  chain_hash: string | null;
  chain_items: number | null;
  implicit_parent: number;
  named_parent_id: string | null;
  background: number;
  conversation_id: string | null;
}

const INPUT = 0;
const OUTPUT = 1;
/** Responses whose just-written output rows are kept for their first read (`written`). */
const WRITTEN_KEPT = 8;
/**
 * Output larger than this (UTF-16 units of JSON) is not kept but read back when needed: a few
 * multi-MB outputs never continued must not sit in an isolate's 128 MB
 * (https://developers.cloudflare.com/workers/platform/limits/#memory).
 */
const WRITTEN_MAX_UNITS = 1 << 20;

function parseJson(text: string | null): Json | null {
  return text === null ? null : (JSON.parse(text) as Json);
}

/** A response row, decoded; `settings` is the settings' JSON (read from its pieces if need be). */
function decode(row: ResponseRow, settings: string): ResponseRecord {
  return {
    id: row.id,
    parentId: row.parent_id,
    connId: row.conn_id,
    store: row.store === 1,
    status: row.status as ResponseStatus,
    model: row.model,
    settings: JSON.parse(settings) as Record<string, Json>,
    usage: parseJson(row.usage),
    error: parseJson(row.error),
    incompleteDetails: parseJson(row.incomplete_details),
    createdAt: row.created_at,
    completedAt: row.completed_at,
    moderation: parseJson(row.moderation),
    implicitParent: row.implicit_parent === 1,
    namedParentId: row.named_parent_id,
    background: row.background === 1,
    conversationId: row.conversation_id,
    chain:
      row.chain_hash === null || row.chain_items === null
        ? null
        : { hash: row.chain_hash, items: row.chain_items },
  };
}

/** The terminal outcome of a response, written atomically with its output items. */
export interface ResponseOutcome {
  status: Exclude<ResponseStatus, "queued" | "in_progress">;
  output: readonly StoredItem[];
  usage: Json | null;
  error: Json | null;
  incompleteDetails: Json | null;
  completedAt: number;
  /** `response.moderation` results (src/safety/), when the request asked for them. */
  moderation?: Json | null;
  /**
   * The response's history hash through its output (src/resend/chain-hash.ts) and, for a completed
   * response that may be continued by a resend, its resend key. Absent: neither is kept.
   */
  chain?: ChainState & { resendKey: string | null };
}

/** A response a resend may continue: its id and how many items its history held. */
export interface ResendCandidate {
  id: string;
  resendKey: string;
  chainItems: number;
}

/** The key of an item row: its response, input or output, and position. */
export interface ItemKey {
  responseId: string;
  kind: "input" | "output";
  position: number;
}

/** An item row with its cached token count (null until counted) and its size. */
export interface ItemRow extends ItemKey {
  item: StoredItem;
  tokens: number | null;
  /** UTF-8 bytes of the stored JSON. */
  bytes: number;
}

/** A token count to store for an item row. */
export interface ItemTokenCount extends ItemKey {
  tokens: number;
}

interface ItemRowData extends Record<string, SqlStorageValue> {
  response_id: string;
  kind: number;
  position: number;
  data: string;
  pieces: number;
  tokens: number | null;
  bytes: number;
}

function decodeItemRow(row: ItemRowData, value: StoredValue): ItemRow {
  return {
    responseId: row.response_id,
    kind: row.kind === INPUT ? "input" : "output",
    position: row.position,
    item: JSON.parse(value.text) as StoredItem,
    tokens: row.tokens,
    bytes: value.bytes,
  };
}

/** Data access for responses and items of one session. */
export class ConversationStore {
  private readonly storage: DurableObjectStorage;
  private readonly sql: SqlStorage;
  /** Persisted event logs (resumable streams). */
  readonly eventLogs: EventLogStore;
  /** Pieces of items and settings too long for one row. */
  private readonly large: LargeValueStore;
  /** The grace window of closed sockets' store:false state (released-scopes.ts). */
  readonly scopes: ReleasedScopes;
  /** Webhook events of ended background responses, until delivered (webhook-outbox.ts). */
  readonly webhooks: WebhookOutbox;
  /** Conversations and their items (conversations.ts). */
  readonly conversations: Conversations;
  /** The one deletion of responses (response-deletion.ts). */
  private readonly deletion: ResponseDeletion;
  /** Bumped by every deletion (see `historyEpoch`). */
  private epoch = 0;
  /**
   * `oldestStored()` as last read (undefined: not read since the last deletion). Only `create`
   * adds a store:true response and only the one deletion removes one, so the copy is kept true by
   * those two; the retention part asks for it after every turn (its alarm deadline).
   */
  private oldest: number | null | undefined;
  /**
   * The output rows `finish` just wrote, by response, until `outputRows` first reads them (the
   * render cache completes the next turn's history with them, src/context/render-cache.ts): the
   * same rows SQLite returns, without reading them back. Bounded; emptied by every deletion, and
   * kept equal to the rows by `setItemTokens`.
   */
  private readonly written = new Map<string, ItemRow[]>();

  /** Runs pending schema migrations (synchronously) and wraps the storage. */
  constructor(storage: DurableObjectStorage) {
    this.storage = storage;
    this.sql = storage.sql;
    migrate(storage);
    this.eventLogs = new EventLogStore(storage.sql);
    this.large = new LargeValueStore(storage.sql);
    this.deletion = new ResponseDeletion({
      storage,
      large: this.large,
      eventLogs: this.eventLogs,
      bumpEpoch: () => {
        this.epoch++;
        this.oldest = undefined;
        this.written.clear();
      },
    });
    this.scopes = new ReleasedScopes(storage, (ids) => this.deletion.delete(ids));
    this.webhooks = new WebhookOutbox(storage.sql);
    this.conversations = new Conversations(storage, this.large);
  }

  /**
   * Registers rows of a higher layer keyed by response id (the safety chain marks), deleted with
   * their responses by every deletion.
   */
  addDependent(dependent: ResponseDependent): void {
    this.deletion.addDependent(dependent);
  }

  /** The response with this id, or null. */
  get(id: string): ResponseRecord | null {
    const row = this.sql.exec<ResponseRow>("SELECT * FROM responses WHERE id = ?", id).toArray()[0];
    return row ? this.decodeRow(row) : null;
  }

  /**
   * Input + output tokens of the response's recorded usage (0 when it is unknown, running or has
   * none): about what a continuation of it sends as history (the tenant's token reservation,
   * src/session/admission.ts). One column of one row.
   */
  usageTokens(id: string): number {
    const row = this.sql
      .exec<{ usage: string | null }>("SELECT usage FROM responses WHERE id = ?", id)
      .toArray()[0];
    const usage = parseJson(row?.usage ?? null);
    if (!isRecord(usage)) return 0;
    const count = (value: unknown) =>
      typeof value === "number" && Number.isFinite(value) ? Math.max(0, value) : 0;
    return count(usage.input_tokens) + count(usage.output_tokens);
  }

  /** A response row decoded, its settings read back from their pieces when they were split. */
  private decodeRow(row: ResponseRow): ResponseRecord {
    const settings =
      row.settings_pieces > 0
        ? this.large.read({ responseId: row.id, kind: SETTINGS_KIND, position: 0 }).text
        : row.settings;
    return decode(row, settings);
  }

  /**
   * Inserts a new response with its input items, in one transaction.
   * @param record the response row (status normally `in_progress`).
   * @param input the request's own input items, ids assigned.
   * @param tokens token counts of `input` made so far (by position; null or missing = not counted).
   */
  create(
    record: ResponseRecord,
    input: readonly StoredItem[],
    tokens: readonly (number | null)[] = [],
  ): void {
    this.storage.transactionSync(() => {
      const settings = this.large.write(
        { responseId: record.id, kind: SETTINGS_KIND, position: 0 },
        JSON.stringify(record.settings),
      );
      this.sql.exec(
        `INSERT INTO responses (id, parent_id, conn_id, store, status, model, settings, settings_pieces,
           usage, error, incomplete_details, created_at, completed_at, chain_hash, chain_items, implicit_parent,
           named_parent_id, background, conversation_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        record.id,
        record.parentId,
        record.connId,
        record.store ? 1 : 0,
        record.status,
        record.model,
        settings.inline,
        settings.pieces,
        record.usage === null ? null : JSON.stringify(record.usage),
        record.error === null ? null : JSON.stringify(record.error),
        record.incompleteDetails === null ? null : JSON.stringify(record.incompleteDetails),
        record.createdAt,
        record.completedAt,
        record.chain?.hash ?? null,
        record.chain?.items ?? null,
        record.implicitParent ? 1 : 0,
        record.namedParentId ?? null,
        record.background ? 1 : 0,
        record.conversationId ?? null,
      );
      this.insertItems(record.id, INPUT, input, tokens);
    });
    if (record.store && this.oldest !== undefined) {
      this.oldest = this.oldest === null ? record.createdAt : Math.min(this.oldest, record.createdAt);
    }
  }

  /**
   * A `queued` response starts (a background response, once announced: docs/background.md).
   * Does nothing when it is not `queued` (deleted, or already ended).
   */
  start(id: string): void {
    this.sql.exec("UPDATE responses SET status = 'in_progress' WHERE id = ? AND status = 'queued'", id);
  }

  /**
   * Writes a response's output items, terminal status and (store:true) the end of its event log
   * atomically.
   * Does nothing when the response no longer exists (its store:false socket closed meanwhile, or it
   * was deleted).
   * @param logTail the JSON texts of the events not logged yet, ending with the terminal event
   *   (null: no log).
   */
  finish(id: string, outcome: ResponseOutcome, logTail: readonly string[] | null): void {
    let texts: string[] | null = null;
    this.storage.transactionSync(() => {
      // The update first: it also tells whether the response still exists, and its conversation
      // (no extra read).
      const [updated] = this.sql
        .exec<{ conversation_id: string | null }>(
          `UPDATE responses SET status = ?, usage = ?, error = ?, incomplete_details = ?, completed_at = ?,
             moderation = ?, chain_hash = ?, chain_items = ?, resend_key = ? WHERE id = ?
           RETURNING conversation_id`,
          outcome.status,
          outcome.usage === null ? null : JSON.stringify(outcome.usage),
          outcome.error === null ? null : JSON.stringify(outcome.error),
          outcome.incompleteDetails === null ? null : JSON.stringify(outcome.incompleteDetails),
          outcome.completedAt,
          outcome.moderation ? JSON.stringify(outcome.moderation) : null,
          outcome.chain?.hash ?? null,
          outcome.chain?.items ?? null,
          outcome.chain?.resendKey ?? null,
          id,
        )
        .toArray();
      if (!updated) return;
      texts = this.insertItems(id, OUTPUT, outcome.output);
      if (logTail) this.eventLogs.append(id, logTail);
      if (outcome.status === "completed" && updated.conversation_id) {
        this.appendToConversation(id, updated.conversation_id, outcome);
      }
    });
    if (texts) this.keepWritten(id, texts); // committed
  }

  /**
   * A completed turn of a conversation: its own input, then its output, appended to the
   * conversation (items it already holds skipped: a full resend of the conversation's items is the
   * turn's input when it did not continue a held chain), in `finish`'s transaction — so the
   * terminal event, sent after it, never announces a turn the conversation does not hold
   * (https://platform.openai.com/docs/api-reference/responses/create#responses_create-conversation).
   */
  private appendToConversation(id: string, conversationId: string, outcome: ResponseOutcome): void {
    if (!this.conversations.get(conversationId)) return; // deleted while it ran
    this.conversations.append(conversationId, [...this.items(id, "input"), ...outcome.output], Date.now());
  }

  /**
   * Appends events a running response has sent to its event log (src/store/event-log-store.ts),
   * as their JSON texts. Does nothing when the response no longer exists (deleted while it ran).
   */
  appendEventLog(id: string, events: readonly string[]): void {
    this.storage.transactionSync(() => {
      if (this.exists(id)) this.eventLogs.append(id, events);
    });
  }

  private exists(id: string): boolean {
    return this.sql.exec("SELECT 1 FROM responses WHERE id = ?", id).toArray().length > 0;
  }

  /** Remembers the output rows of `responseId` as `finish` wrote them (see `written`). */
  private keepWritten(responseId: string, texts: readonly string[]): void {
    if (texts.reduce((units, text) => units + text.length, 0) > WRITTEN_MAX_UNITS) return;
    this.written.set(
      responseId,
      texts.map((text, position) => {
        // SQLite's length(CAST(data AS BLOB)): UTF-8, a lone surrogate stored as U+FFFD.
        const bytes = utf8Length(text);
        const row = {
          response_id: responseId,
          kind: OUTPUT,
          position,
          data: text,
          pieces: 0,
          tokens: null,
          bytes,
        };
        return decodeItemRow(row, { text, bytes }); // decoded as a read decodes it
      }),
    );
    if (this.written.size > WRITTEN_KEPT) {
      const oldest = this.written.keys().next().value;
      if (oldest !== undefined) this.written.delete(oldest);
    }
  }

  /** Inserts the rows of `items`; returns their JSON texts, by position. */
  private insertItems(
    responseId: string,
    kind: number,
    items: readonly StoredItem[],
    tokens: readonly (number | null)[] = [],
  ): string[] {
    return items.map((item, position) => {
      const text = JSON.stringify(item);
      const data = this.large.write({ responseId, kind, position }, text);
      this.sql.exec(
        "INSERT INTO items (response_id, kind, position, id, type, data, pieces, tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        responseId,
        kind,
        position,
        item.id,
        item.type,
        data.inline,
        data.pieces,
        tokens[position] ?? null, // counted by src/context before the insert, else null (counted later)
      );
      return text;
    });
  }

  /**
   * The model context a continuation of `responseId` starts from
   * (https://platform.openai.com/docs/guides/conversation-state):
   * history(R) = history(parent(R)) + input(R) + output(R), oldest first. One recursive query.
   */
  history(responseId: string): StoredItem[] {
    return this.historyRows(responseId).map((row) => row.item);
  }

  /** How many output items a response has (0: none, e.g. a `generate: false` warm-up); one indexed count. */
  outputCount(responseId: string): number {
    return this.sql
      .exec<{ n: number }>(
        "SELECT COUNT(*) AS n FROM items WHERE response_id = ? AND kind = ?",
        responseId,
        OUTPUT,
      )
      .one().n;
  }

  /** The input (kind 0) or output (kind 1) items of one response, in order. */
  items(responseId: string, which: "input" | "output"): StoredItem[] {
    return this.itemRows(responseId, which === "input" ? INPUT : OUTPUT).map((row) => row.item);
  }

  /**
   * Counter of history-changing writes: it changes whenever a response is deleted, its children
   * re-parented (every deletion, response-deletion.ts), i.e. whenever some `history(R)` may have
   * changed. In-memory copies of histories (src/context/render-cache.ts) are valid only for the
   * epoch they were read in. Appending a response never changes an existing history.
   */
  get historyEpoch(): number {
    return this.epoch;
  }

  /**
   * `history(responseId)` as rows with their keys and cached token counts (null = not counted yet).
   * Same recursive query as `history`.
   */
  historyRows(responseId: string): ItemRow[] {
    return this.sql
      .exec<ItemRowData>(
        `WITH RECURSIVE chain(id, parent_id, depth) AS (
           SELECT id, parent_id, 0 FROM responses WHERE id = ?
           UNION ALL
           SELECT r.id, r.parent_id, chain.depth + 1 FROM responses r JOIN chain ON r.id = chain.parent_id
         )
         SELECT items.response_id, items.kind, items.position, items.data, items.pieces, items.tokens,
           length(CAST(items.data AS BLOB)) AS bytes
         FROM chain JOIN items ON items.response_id = chain.id
         ORDER BY chain.depth DESC, items.kind ASC, items.position ASC`,
        responseId,
      )
      .toArray()
      .map((row) => this.decodeItem(row));
  }

  /** The output items of one response as rows with keys and cached token counts, in order. */
  outputRows(responseId: string): ItemRow[] {
    const written = this.written.get(responseId);
    if (written) {
      this.written.delete(responseId);
      return written;
    }
    return this.itemRows(responseId, OUTPUT);
  }

  /** The input or output item rows of one response, in order. */
  private itemRows(responseId: string, kind: number): ItemRow[] {
    return this.sql
      .exec<ItemRowData>(
        `SELECT response_id, kind, position, data, pieces, tokens, length(CAST(data AS BLOB)) AS bytes
         FROM items WHERE response_id = ? AND kind = ? ORDER BY position`,
        responseId,
        kind,
      )
      .toArray()
      .map((row) => this.decodeItem(row));
  }

  /** An item row with its JSON (joined from its pieces when it has some). */
  private decodeItem(row: ItemRowData): ItemRow {
    const value =
      row.pieces > 0
        ? this.large.read({ responseId: row.response_id, kind: row.kind, position: row.position })
        : { text: row.data, bytes: row.bytes };
    return decodeItemRow(row, value);
  }

  /** Stores token counts of existing item rows (one transaction; missing rows are ignored). */
  setItemTokens(counts: readonly ItemTokenCount[]): void {
    if (counts.length === 0) return;
    this.storage.transactionSync(() => {
      for (const c of counts) {
        this.sql.exec(
          "UPDATE items SET tokens = ? WHERE response_id = ? AND kind = ? AND position = ?",
          c.tokens,
          c.responseId,
          c.kind === "input" ? INPUT : OUTPUT,
          c.position,
        );
        const kept = c.kind === "output" ? this.written.get(c.responseId)?.[c.position] : undefined;
        if (kept) kept.tokens = c.tokens;
      }
    });
  }

  /**
   * True when a response other than `except` builds on `id` (index `responses_by_parent`; for a
   * failed continuation, src/engine/failed-continuation.ts).
   */
  hasChildOtherThan(id: string, except: string | null): boolean {
    return (
      this.sql
        .exec("SELECT 1 FROM responses WHERE parent_id = ? AND id IS NOT ? LIMIT 1", id, except)
        .toArray().length > 0
    );
  }

  /**
   * Deletes one response with everything it owns (response-deletion.ts). Its children become the
   * roots of their chains (as when a response expires): their history no longer holds anything
   * before them (see src/engine/history-repair.ts for what that leaves behind).
   * @returns false when no such response exists.
   */
  delete(id: string): boolean {
    return this.deletion.delete([id]) > 0;
  }

  /**
   * Deletes store:true responses created before `cutoff` (ms), with everything they own; children
   * of deleted responses become chain roots.
   * @returns how many responses expired.
   */
  expireBefore(cutoff: number): number {
    const ids = this.sql
      .exec<{ id: string }>("SELECT id FROM responses WHERE store = 1 AND created_at < ?", cutoff)
      .toArray()
      .map((row) => row.id);
    return this.deletion.delete(ids);
  }

  /**
   * The responses whose resend key is one of `keys` (the keys of a request's input prefixes,
   * src/resend/match.ts), longest history first, newest first among equals; at most `limit`.
   * One indexed query whatever the number of keys (they travel as one JSON array).
   */
  resendCandidates(keys: readonly string[], limit = 4): ResendCandidate[] {
    if (keys.length === 0) return [];
    return this.sql
      .exec<{ id: string; resend_key: string; chain_items: number }>(
        `SELECT id, resend_key, chain_items FROM responses
         WHERE resend_key IN (SELECT value FROM json_each(?))
         ORDER BY chain_items DESC, created_at DESC LIMIT ?`,
        JSON.stringify(keys),
        limit,
      )
      .toArray()
      .map((row) => ({ id: row.id, resendKey: row.resend_key, chainItems: row.chain_items }));
  }

  /**
   * The reasoning items with this id the session returned (output rows), newest first, each with
   * the id of the response that returned it, exactly as stored.
   */
  returnedReasoning(id: string): Array<{ item: StoredItem; responseId: string }> {
    return this.sql
      .exec<ItemRowData>(
        `SELECT items.response_id, items.kind, items.position, items.data, items.pieces, items.tokens,
           length(CAST(items.data AS BLOB)) AS bytes
         FROM items JOIN responses ON responses.id = items.response_id
         WHERE items.id = ? AND items.type = 'reasoning' AND items.kind = ${OUTPUT}
         ORDER BY responses.created_at DESC LIMIT 4`,
        id,
      )
      .toArray()
      .map((row) => ({ item: this.decodeItem(row).item, responseId: row.response_id }));
  }

  /**
   * The items with this id the session holds (input and output rows of its responses), newest
   * response first, each with the id of its response, exactly as stored: what an `item_reference`
   * names (src/resend/item-references.ts). Indexed (migrations/0009_items_by_id.sql).
   */
  heldItems(id: string, limit = 4): Array<{ item: StoredItem; responseId: string }> {
    return this.sql
      .exec<ItemRowData>(
        `SELECT items.response_id, items.kind, items.position, items.data, items.pieces, items.tokens,
           length(CAST(items.data AS BLOB)) AS bytes
         FROM items JOIN responses ON responses.id = items.response_id
         WHERE items.id = ?
         ORDER BY responses.created_at DESC LIMIT ?`,
        id,
        limit,
      )
      .toArray()
      .map((row) => ({ item: this.decodeItem(row).item, responseId: row.response_id }));
  }

  /** The model of the session's latest response, or null before the first. */
  lastModel(): string | null {
    return (
      this.sql
        .exec<{ model: string }>("SELECT model FROM responses ORDER BY created_at DESC LIMIT 1")
        .toArray()[0]?.model ?? null
    );
  }

  /** Creation time (ms) of the oldest store:true response, or null when there is none. */
  oldestStored(): number | null {
    if (this.oldest === undefined) {
      this.oldest = this.sql
        .exec<{ t: number | null }>("SELECT MIN(created_at) AS t FROM responses WHERE store = 1")
        .one().t;
    }
    return this.oldest;
  }

  /**
   * Deletes every store:false response owned by a connection, with everything it owns.
   * A connection that owns nothing (every store:true HTTP request, whose scope is cleaned up after
   * each turn) costs one indexed read: no write (so no commit for the output gate to wait on) and
   * no `historyEpoch` bump, which would otherwise empty the render cache and make the next turn
   * re-read its whole history from SQLite.
   * @returns how many responses were deleted.
   */
  deleteConnectionScoped(connId: string): number {
    const ids = this.sql
      .exec<{ id: string }>("SELECT id FROM responses WHERE conn_id = ?", connId)
      .toArray()
      .map((row) => row.id);
    return this.deletion.delete(ids);
  }

  /** Connection ids that still own store:false responses. */
  connectionsWithScopedState(): string[] {
    return this.sql
      .exec<{ conn_id: string }>("SELECT DISTINCT conn_id FROM responses WHERE conn_id IS NOT NULL")
      .toArray()
      .map((row) => row.conn_id);
  }

  /**
   * Responses left `queued` / `in_progress` by an earlier instance (restarted, evicted or
   * redeployed mid-turn). Read on wake, before any turn runs, so each can be ended
   * (src/engine/recovery.ts) and none stays in progress forever.
   */
  interrupted(): ResponseRecord[] {
    return this.sql
      .exec<ResponseRow>("SELECT * FROM responses WHERE status IN ('queued', 'in_progress')")
      .toArray()
      .map((row) => this.decodeRow(row));
  }
}
