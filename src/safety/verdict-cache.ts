/**
 * The session's memory of safety checks, in its Durable Object's SQLite (migrations/0004_safety.sql):
 * verdicts by (classifier, content hash), and chains known to be checked under a policy
 * fingerprint. Owns all SQL on those tables and their bounds.
 * Invariants: a verdict is only ever read back under the classifier id that produced it; a chain
 * row exists only for a response whose every input and output item was checked under that
 * policy, and goes with its response (the store's one deletion calls `forgetResponses`,
 * src/store/response-deletion.ts); both tables stay bounded (oldest verdicts are pruned; chain
 * rows of responses deleted before that hook existed too);
 * the cursor of every read is consumed before any `await`. The verdicts read or written while the
 * object is awake are also kept in memory (bounded, least recently used out), so a turn's lookup
 * reads SQLite only for what this wake has not seen (a lookup per turn showed in the runtime's
 * profile, issue #27); a verdict stays true under its classifier id, so the copy needs no expiry,
 * and is dropped whole when the table is pruned. A local classifier's verdicts (the rules) are kept
 * in memory only: running it again after a wake costs less than a row written on every turn. So
 * are the chain marks of a policy whose classifiers are all local (a row per turn showed in the
 * runtime's profile, issue #27): after a wake the next turn checks its history again with the
 * rules, as a cache miss does, instead of every turn paying a write.
 * Source: https://developers.cloudflare.com/durable-objects/api/sqlite-storage-api/
 */
import { isRecord } from "../protocol/json.ts";
import type { ResponseDependent } from "../store/response-deletion.ts";
import type { Classifier, Verdict } from "./classifier.ts";

/** What the cache reads of a classifier: its cache namespace and whether it runs locally. */
export type CachedClassifier = Pick<Classifier, "id" | "local">;

/** The bounds of the cache. */
export interface CacheLimits {
  /** Most verdict rows kept per session; beyond it the oldest tenth is dropped. */
  maxVerdicts: number;
  /** Writes between two bound checks. */
  pruneEvery: number;
}

const DEFAULT_LIMITS: CacheLimits = { maxVerdicts: 50_000, pruneEvery: 500 };
/** Verdicts kept in memory per session (a few KB each at most; most are a few hundred bytes). */
const MEMORY_ENTRIES = 2_048;
/** Responses whose local chain marks are kept in memory per session (a chained turn reads its parent's). */
const MEMORY_CHAINS = 256;
/** Columns of one `safety_verdicts` row as written. */
const COLUMNS_PER_ROW = 5;
/** SQLite bound parameters per statement in a Durable Object. */
const MAX_PARAMS = 100;

/** A chain row, as exported to another session of the tenant. */
export interface ChainRow {
  policy: string;
  verdict: Verdict;
}

/**
 * A verdict as this module stored it (`JSON.stringify` of a `Verdict`), or null when the text is
 * not one: a row that cannot be read counts as absent (its text is checked again).
 */
function storedVerdict(text: string): Verdict | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isRecord(value) || typeof value.flagged !== "boolean") return null;
  const categories: Record<string, boolean> = {};
  const scores: Record<string, number> = {};
  for (const [name, hit] of Object.entries(isRecord(value.categories) ? value.categories : {})) {
    if (typeof hit === "boolean") categories[name] = hit;
  }
  for (const [name, score] of Object.entries(isRecord(value.scores) ? value.scores : {})) {
    if (typeof score === "number") scores[name] = score;
  }
  return { flagged: value.flagged, categories, scores };
}

/** A verdict to cache. */
export interface VerdictEntry {
  hash: string;
  verdict: Verdict;
}

/** Verdicts and checked chains of one session. */
export class VerdictCache implements ResponseDependent {
  private readonly sql: SqlStorage;
  private readonly now: () => number;
  private readonly limits: CacheLimits;
  private writes = 0;
  /** `classifier \0 hash` → verdict, in least-recently-used order. */
  private readonly memory = new Map<string, Verdict>();
  /** Response id → policy → verdict of chains checked by local classifiers only, oldest first. */
  private readonly localChains = new Map<string, Map<string, Verdict>>();

  constructor(sql: SqlStorage, now: () => number = Date.now, limits: CacheLimits = DEFAULT_LIMITS) {
    this.sql = sql;
    this.now = now;
    this.limits = limits;
  }

  /** Cached verdicts of `classifier` for `hashes`, by hash (missing ones are absent). */
  lookup({ id: classifier, local }: CachedClassifier, hashes: readonly string[]): Map<string, Verdict> {
    const found = new Map<string, Verdict>();
    const unseen: string[] = [];
    for (const hash of new Set(hashes)) {
      const verdict = this.recall(classifier, hash);
      if (verdict) found.set(hash, verdict);
      else if (!local) unseen.push(hash);
    }
    for (let i = 0; i < unseen.length; i += MAX_PARAMS - 1) {
      const batch = unseen.slice(i, i + MAX_PARAMS - 1);
      const rows = this.sql
        .exec<{ hash: string; verdict: string }>(
          `SELECT hash, verdict FROM safety_verdicts WHERE classifier = ? AND hash IN (${batch.map(() => "?").join(",")})`,
          classifier,
          ...batch,
        )
        .toArray();
      for (const row of rows) {
        const verdict = storedVerdict(row.verdict);
        if (!verdict) continue; // unreadable: classified again, as if never cached
        found.set(row.hash, verdict);
        this.remember(classifier, row.hash, verdict);
      }
    }
    return found;
  }

  /** Caches verdicts of `classifier` (a later verdict for the same hash replaces the earlier). */
  store({ id: classifier, local }: CachedClassifier, entries: readonly VerdictEntry[]): void {
    for (const { hash, verdict } of entries) this.remember(classifier, hash, verdict);
    if (local || entries.length === 0) return;
    const at = this.now();
    // One statement per batch of rows, not per verdict: a turn stores several.
    const rowsPerStatement = Math.floor(MAX_PARAMS / COLUMNS_PER_ROW);
    for (let i = 0; i < entries.length; i += rowsPerStatement) {
      const batch = entries.slice(i, i + rowsPerStatement);
      this.sql.exec(
        `INSERT INTO safety_verdicts (classifier, hash, flagged, verdict, checked_at)
         VALUES ${batch.map(() => "(?, ?, ?, ?, ?)").join(", ")}
         ON CONFLICT(classifier, hash) DO UPDATE SET flagged = excluded.flagged, verdict = excluded.verdict,
           checked_at = excluded.checked_at`,
        ...batch.flatMap(({ hash, verdict }) => [
          classifier,
          hash,
          verdict.flagged ? 1 : 0,
          JSON.stringify(verdict),
          at,
        ]),
      );
    }
    this.wrote(entries.length);
  }

  /** The merged verdict of a chain checked under `policy`, or null when it was not. */
  chain(responseId: string, policy: string): Verdict | null {
    const local = this.localChains.get(responseId)?.get(policy);
    if (local) return local;
    const row = this.sql
      .exec<{ verdict: string }>(
        "SELECT verdict FROM safety_chains WHERE response_id = ? AND policy = ?",
        responseId,
        policy,
      )
      .toArray()[0];
    return row ? storedVerdict(row.verdict) : null;
  }

  /**
   * Records that the chain ending at `responseId` was checked under `policy`: in memory only when
   * `local` (every classifier of the policy runs locally), else in SQLite.
   */
  markChain(responseId: string, policy: string, verdict: Verdict, local: boolean): void {
    if (local) {
      const policies = this.localChains.get(responseId) ?? new Map<string, Verdict>();
      policies.set(policy, verdict);
      this.localChains.delete(responseId);
      this.localChains.set(responseId, policies);
      if (this.localChains.size > MEMORY_CHAINS) {
        const oldest = this.localChains.keys().next().value;
        if (oldest !== undefined) this.localChains.delete(oldest);
      }
      return;
    }
    this.sql.exec(
      `INSERT INTO safety_chains (response_id, policy, verdict) VALUES (?, ?, ?)
       ON CONFLICT(response_id, policy) DO UPDATE SET verdict = excluded.verdict`,
      responseId,
      policy,
      JSON.stringify(verdict),
    );
    this.wrote(1);
  }

  /** Every policy the chain ending at `responseId` was checked under (for an export). */
  exportChain(responseId: string): ChainRow[] {
    const stored = this.sql
      .exec<{ policy: string; verdict: string }>(
        "SELECT policy, verdict FROM safety_chains WHERE response_id = ?",
        responseId,
      )
      .toArray()
      .flatMap((row) => {
        const verdict = storedVerdict(row.verdict);
        return verdict ? [{ policy: row.policy, verdict }] : [];
      });
    const local = [...(this.localChains.get(responseId) ?? [])].map(([policy, verdict]) => ({
      policy,
      verdict,
    }));
    return [...stored, ...local];
  }

  /** Records chain rows exported by another session of the tenant for the imported `responseId`. */
  importChain(responseId: string, rows: readonly ChainRow[]): void {
    // Stored: an imported chain was checked elsewhere, so no wake of this session could redo it.
    for (const row of rows) this.markChain(responseId, row.policy, row.verdict, false);
  }

  /** Deletes the chain rows of deleted responses (called by the store's one deletion). */
  forgetResponses(responseIds: readonly string[]): void {
    for (const id of responseIds) {
      this.localChains.delete(id);
      this.sql.exec("DELETE FROM safety_chains WHERE response_id = ?", id);
    }
  }

  /** The verdict kept in memory for (classifier, hash), marked as just used; undefined if none. */
  private recall(classifier: string, hash: string): Verdict | undefined {
    const key = `${classifier}\0${hash}`;
    const verdict = this.memory.get(key);
    if (verdict) {
      this.memory.delete(key);
      this.memory.set(key, verdict);
    }
    return verdict;
  }

  private remember(classifier: string, hash: string, verdict: Verdict): void {
    const key = `${classifier}\0${hash}`;
    this.memory.delete(key);
    this.memory.set(key, verdict);
    if (this.memory.size > MEMORY_ENTRIES) {
      const oldest = this.memory.keys().next().value;
      if (oldest !== undefined) this.memory.delete(oldest);
    }
  }

  /** Keeps both tables bounded, checked every `pruneEvery` writes. */
  private wrote(count: number): void {
    const { maxVerdicts, pruneEvery } = this.limits;
    this.writes += count;
    if (this.writes < pruneEvery) return;
    this.writes = 0;
    this.sql.exec("DELETE FROM safety_chains WHERE response_id NOT IN (SELECT id FROM responses)");
    const total = this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM safety_verdicts").one().n;
    if (total > maxVerdicts) {
      this.memory.clear(); // what SQLite drops is dropped from memory too (rare: a bound check)
      this.sql.exec(
        `DELETE FROM safety_verdicts WHERE (classifier, hash) IN
           (SELECT classifier, hash FROM safety_verdicts ORDER BY checked_at LIMIT ?)`,
        Math.ceil(maxVerdicts / 10),
      );
    }
  }
}
