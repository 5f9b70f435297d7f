/**
 * Incremental input checks: a turn classifies only what was never classified. Owns which texts
 * of a turn are candidates — `instructions`, each tool definition, the new input items, and the
 * history only when its chain is not known to be checked under this policy (a chain started with
 * safety off, under another classifier, or by a warm-up) — the per-item-type policy (check,
 * trust, sample), the cache lookup, and the one batched classifier call for everything missing.
 * Invariants: at most one classifier call per check, holding each distinct uncached text once;
 * nothing is written here (the verdicts to cache are returned, so the stage writes them with the
 * turn's own commit); a flagged verdict of a `combined` classifier is never cached per text.
 */
import { isRecord } from "../protocol/json.ts";
import {
  CLEAN,
  type Classifier,
  ClassifierUnavailable,
  classifyWithin,
  mergeVerdicts,
  type Verdict,
} from "./classifier.ts";
import { itemText, pieces, sampled, sha256Hex, toolText } from "./content.ts";
import { itemCheckFor, type SafetyPolicy } from "./policy.ts";
import type { VerdictCache, VerdictEntry } from "./verdict-cache.ts";

/** What the input checker reads of the verdict cache. */
export type VerdictLookup = Pick<VerdictCache, "lookup" | "chain">;

/** What an input check reports for the turn's accounting. */
export interface InputAccounting {
  /** Candidate texts (pieces) considered: instructions, tools, items. */
  considered: number;
  /** Pieces answered from the cache. */
  cacheHits: number;
  /** Pieces skipped by the item policy (trusted, or not in the sample). */
  skipped: number;
  /** Texts in the classifier call (0 = no call). */
  batchSize: number;
  /** Classifier calls made (0 or 1). */
  calls: number;
  /** Time in the classifier call, ms. */
  classifierMs: number;
  /** Time of the whole check, ms. */
  checkMs: number;
  /** True when the history had to be checked (its chain was not known to be checked). */
  historyChecked: boolean;
}

/** The outcome of an input check. */
export interface InputCheck {
  /** Merged verdict over the checked chain and everything checked now. */
  verdict: Verdict;
  /** Set when the classifier gave no verdict (then `verdict` covers only what was known). */
  error: ClassifierUnavailable | null;
  /** Verdicts to cache. */
  pending: VerdictEntry[];
  accounting: InputAccounting;
}

/** What one turn gives the input checker. */
export interface InputCheckRequest {
  classifier: Classifier;
  policy: SafetyPolicy;
  /** The policy fingerprint chains are marked under. */
  policyKey: string;
  /** The response this turn continues, or null. */
  parentId: string | null;
  /** history(parent), oldest first. */
  history: readonly unknown[];
  /** The turn's own input items. */
  input: readonly unknown[];
  instructions: string | null | undefined;
  tools: readonly unknown[] | null | undefined;
}

/** A text to check and whether the item policy may sample it. */
interface Candidate {
  text: string;
  /** Sampling rate (1 = always checked). */
  rate: number;
}

/** Hashes of texts seen recently (instructions and tools recur every turn). */
class HashMemo {
  private readonly map = new Map<string, string>();
  private readonly capacity = 256;

  async hash(text: string): Promise<string> {
    const known = this.map.get(text);
    if (known !== undefined) return known;
    const hash = await sha256Hex(text);
    if (this.map.size >= this.capacity) this.map.delete(this.map.keys().next().value ?? "");
    this.map.set(text, hash);
    return hash;
  }
}

/** The input checker of one session. */
export class InputChecker {
  private readonly cache: VerdictLookup;
  private readonly now: () => number;
  private readonly memo = new HashMemo();

  constructor(cache: VerdictLookup, now: () => number = () => performance.now()) {
    this.cache = cache;
    this.now = now;
  }

  /** Checks one turn's input (never throws for a classifier failure: see `InputCheck.error`). */
  async check(request: InputCheckRequest): Promise<InputCheck> {
    const started = this.now();
    const parentVerdict = request.parentId ? this.cache.chain(request.parentId, request.policyKey) : CLEAN;
    const historyChecked = parentVerdict === null;
    const candidates = this.candidates(request, historyChecked);
    const accounting: InputAccounting = {
      considered: candidates.length,
      cacheHits: 0,
      skipped: 0,
      batchSize: 0,
      calls: 0,
      classifierMs: 0,
      checkMs: 0,
      historyChecked,
    };
    const hashes = await Promise.all(candidates.map((c) => this.memo.hash(c.text)));
    const wanted = new Map<string, string>(); // hash → text, in first-seen order
    candidates.forEach((candidate, i) => {
      const hash = hashes[i] ?? "";
      if (candidate.rate < 1 && !sampled(hash, candidate.rate)) accounting.skipped++;
      else if (!wanted.has(hash)) wanted.set(hash, candidate.text);
    });
    const cached = this.cache.lookup(request.classifier, [...wanted.keys()]);
    accounting.cacheHits = cached.size;
    const verdicts: Verdict[] = [parentVerdict ?? CLEAN, ...cached.values()];
    const missing = [...wanted].filter(([hash]) => !cached.has(hash));
    const pending: VerdictEntry[] = [];
    let error: ClassifierUnavailable | null = null;
    if (missing.length > 0) {
      accounting.batchSize = missing.length;
      accounting.calls = 1;
      const callStarted = this.now();
      try {
        const answers = await classifyWithin(
          request.classifier,
          missing.map(([, text]) => text),
          "input",
          request.policy.timeoutMs,
        );
        answers.forEach((verdict, i) => {
          verdicts.push(verdict);
          const hash = missing[i]?.[0];
          if (hash && !(verdict.flagged && request.classifier.combined)) pending.push({ hash, verdict });
        });
      } catch (cause) {
        error =
          cause instanceof ClassifierUnavailable
            ? cause
            : new ClassifierUnavailable("error", "The safety classifier failed.");
      }
      accounting.classifierMs = this.now() - callStarted;
    }
    accounting.checkMs = this.now() - started;
    return { verdict: mergeVerdicts(verdicts), error, pending, accounting };
  }

  /** The turn's candidate texts, by the item policy (trusted items are left out here). */
  private candidates(request: InputCheckRequest, withHistory: boolean): Candidate[] {
    const out: Candidate[] = [];
    const add = (text: string, rate: number) => {
      for (const piece of pieces(text)) out.push({ text: piece, rate });
    };
    if (request.instructions) add(request.instructions, 1);
    for (const tool of request.tools ?? []) add(toolText(tool), 1);
    const items = withHistory ? [...request.history, ...request.input] : request.input;
    for (const item of items) {
      const type = isRecord(item) && typeof item.type === "string" ? item.type : "message";
      const check = itemCheckFor(request.policy, type);
      if (check.kind === "trust") continue;
      add(itemText(item), check.kind === "sample" ? check.rate : 1);
    }
    return out;
  }
}
