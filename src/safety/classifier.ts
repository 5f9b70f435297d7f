/**
 * The one interface every safety classifier implements (local rules, an OpenAI-compatible
 * `/v1/moderations` endpoint, Workers AI Llama Guard), its verdict type, and the failure type the
 * failure policy acts on. Owns the timeout around a classifier call.
 * Invariants: `classify` answers one verdict per text, in order, or throws
 * `ClassifierUnavailable` — an error, a timeout or an unusable answer is never a verdict (neither
 * "flagged" nor "clean"); `id` changes whenever the same text could get another verdict (another
 * model, other rules), so cached verdicts are only reused under the same id.
 */

/** The verdict on one text. Category names are the classifier's own. */
export interface Verdict {
  flagged: boolean;
  categories: Record<string, boolean>;
  scores: Record<string, number>;
}

/** Whether a text is what the client sent (input) or what the model generated (output). */
export type Direction = "input" | "output";

/** A safety classifier. */
export interface Classifier {
  /** Cache namespace: kind, model and configuration (e.g. `moderation:omni-moderation-latest`). */
  readonly id: string;
  /** The model name reported in moderation results (`response.moderation.*.model`). */
  readonly model: string;
  /**
   * True when classifying costs no network round trip (the rules classifier): the output checker
   * then checks every delta at once instead of waiting for a window to fill. A local classifier
   * waits on no I/O and no timer, so `classifyWithin` puts no timeout around it.
   */
  readonly local: boolean;
  /**
   * True when one call judges its texts together, so a "flagged" answer cannot be pinned on one
   * text (Llama Guard reads one conversation): such flagged verdicts are never cached per text.
   */
  readonly combined: boolean;
  /**
   * Classifies `texts` in one call.
   * @returns one verdict per text, in order.
   * @throws {ClassifierUnavailable} on an error, an unusable answer, or `signal` (the timeout).
   */
  classify(texts: readonly string[], direction: Direction, signal: AbortSignal): Promise<Verdict[]>;
  /**
   * Optional: how many trailing characters of `text` (checked clean so far) must still be held
   * back because they could be the start of a span this classifier would flag once more text
   * arrives. Without it the output checker holds back its configured number of characters.
   */
  holdBack?(text: string): number;
}

/** Why a classifier gave no verdict. */
export type UnavailableReason = "error" | "timeout" | "unparseable";

/** A classifier that errored, timed out or answered something unusable. Never a verdict. */
export class ClassifierUnavailable extends Error {
  readonly reason: UnavailableReason;

  /** @param message safe to show a client (no secrets, no classified content). */
  constructor(reason: UnavailableReason, message: string) {
    super(message);
    this.name = "ClassifierUnavailable";
    this.reason = reason;
  }
}

/**
 * `classifier.classify` bounded by `timeoutMs` (the call is aborted when it fires).
 * @throws {ClassifierUnavailable} `timeout`, or whatever the classifier threw, as
 *   `ClassifierUnavailable` (an unexpected exception is an `error`).
 */
export async function classifyWithin(
  classifier: Classifier,
  texts: readonly string[],
  direction: Direction,
  timeoutMs: number,
): Promise<Verdict[]> {
  // A local classifier answers from CPU alone: its promise is settled before any timer could fire,
  // so the timer, its AbortController and the race would only cost time on every output delta
  // (a timer per classification showed in the runtime's profile, issue #27; docs/benchmarks.md).
  if (classifier.local)
    return checked(await settle(() => classifier.classify(texts, direction, NEVER)), texts);
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(
        new ClassifierUnavailable("timeout", `The safety classifier did not answer within ${timeoutMs} ms.`),
      );
    }, timeoutMs);
  });
  try {
    return checked(
      await settle(() => Promise.race([classifier.classify(texts, direction, controller.signal), timeout])),
      texts,
    );
  } finally {
    clearTimeout(timer);
  }
}

/** The signal a local classifier gets: it is never aborted (nothing to time out). */
const NEVER: AbortSignal = new AbortController().signal;

/** The classifier's answer, or its failure as `ClassifierUnavailable` (an unexpected one is `error`). */
async function settle(answer: () => Promise<Verdict[]>): Promise<Verdict[]> {
  try {
    return await answer();
  } catch (cause) {
    if (cause instanceof ClassifierUnavailable) throw cause;
    throw new ClassifierUnavailable("error", "The safety classifier failed.");
  }
}

/** `verdicts` when there is one per text, else `ClassifierUnavailable("unparseable")`. */
function checked(verdicts: Verdict[], texts: readonly string[]): Verdict[] {
  if (verdicts.length !== texts.length) {
    throw new ClassifierUnavailable(
      "unparseable",
      `The safety classifier answered ${verdicts.length} verdicts for ${texts.length} texts.`,
    );
  }
  return verdicts;
}

/** The clean verdict (nothing flagged, no categories). */
export const CLEAN: Verdict = { flagged: false, categories: {}, scores: {} };

/** One verdict for several: flagged if any is; a category true if any; each score the maximum. */
export function mergeVerdicts(verdicts: Iterable<Verdict>): Verdict {
  const merged: Verdict = { flagged: false, categories: {}, scores: {} };
  for (const v of verdicts) {
    merged.flagged ||= v.flagged;
    for (const [name, hit] of Object.entries(v.categories)) {
      merged.categories[name] = (merged.categories[name] ?? false) || hit;
    }
    for (const [name, score] of Object.entries(v.scores)) {
      merged.scores[name] = Math.max(merged.scores[name] ?? 0, score);
    }
  }
  return merged;
}

/** The names of the flagged categories of `verdict`, sorted. */
export function flaggedCategories(verdict: Verdict): string[] {
  return Object.entries(verdict.categories)
    .filter(([, hit]) => hit)
    .map(([name]) => name)
    .sort();
}
