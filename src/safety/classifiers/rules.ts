/**
 * The local rules classifier: configurable phrases and regular expressions plus the PII and
 * secret detectors of pii.ts. No network, microseconds per text, so it is the zero-configuration
 * default and the natural output classifier (it checks every streamed delta at once).
 * Owns the rules configuration (`SAFETY_RULES`) and its defaults. The default phrases name
 * unambiguous intent ("how to make a bomb", "kill yourself"), never single alarming words, so
 * code and security writing (`kill -9`, `rm -rf build/`, `DROP TABLE`, "attack surface", a CVE's
 * "exploit") is not flagged (test/unit/safety/rules.test.ts).
 * Invariants: a phrase matches whole words only, case-insensitively, any whitespace between its
 * words; the classifier's `id` changes with its configuration.
 */
import { z } from "zod";
import type { Classifier, Verdict } from "../classifier.ts";
import { detects, PII_CATEGORY, PII_DETECTORS, type PiiDetector, pendingTail } from "./pii.ts";

/** Longest tail the hold-back of one detector or pattern may ask for, in characters. */
const MAX_HOLD = 256;

const phraseRule = z.strictObject({ phrase: z.string().min(3).max(200), category: z.string().min(1) });
const patternRule = z.strictObject({
  pattern: z.string().min(1).max(500),
  flags: z
    .string()
    .regex(/^[imsu]*$/, "flags may only contain i, m, s, u")
    .optional(),
  category: z.string().min(1),
  /** Characters a streamed match could still need (the hold-back of this pattern); default 32. */
  hold: z.number().int().min(0).max(MAX_HOLD).optional(),
});

/** `SAFETY_RULES`: the detectors to run and the phrases and patterns to flag. */
export const rulesConfigSchema = z.strictObject({
  pii: z.array(z.enum(PII_DETECTORS)).optional(),
  phrases: z.array(phraseRule).max(500).optional(),
  patterns: z.array(patternRule).max(100).optional(),
});
/** Parsed rules configuration. */
export type RulesConfig = z.infer<typeof rulesConfigSchema>;

/**
 * Detectors on by default. E-mail is off: an agent's tool outputs (`git log`, package manifests)
 * are full of addresses, and blocking them would stop ordinary coding loops.
 */
export const DEFAULT_PII: readonly PiiDetector[] = ["api_key", "private_key", "card_number"];

/** Phrases flagged by default: explicit harmful intent, not vocabulary. */
export const DEFAULT_PHRASES: ReadonlyArray<{ phrase: string; category: string }> = [
  { phrase: "how to make a bomb", category: "illicit/violent" },
  { phrase: "how to build a bomb", category: "illicit/violent" },
  { phrase: "make a pipe bomb", category: "illicit/violent" },
  { phrase: "synthesize nerve agent", category: "illicit/violent" },
  { phrase: "i will kill you", category: "violence" },
  { phrase: "i am going to kill you", category: "violence" },
  { phrase: "kill yourself", category: "harassment/threatening" },
  { phrase: "how to commit suicide", category: "self-harm/instructions" },
];

interface CompiledPhrase {
  /** Lower-case phrase, single spaces. */
  text: string;
  regex: RegExp;
  category: string;
}

interface CompiledPattern {
  regex: RegExp;
  category: string;
  hold: number;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function compilePhrase(phrase: string, category: string): CompiledPhrase {
  const text = phrase.toLowerCase().trim().replace(/\s+/g, " ");
  const body = text.split(" ").map(escapeRegex).join("\\s+");
  const start = /^\w/.test(text) ? "\\b" : "";
  const end = /\w$/.test(text) ? "\\b" : "";
  return { text, regex: new RegExp(`${start}${body}${end}`, "i"), category };
}

/** FNV-1a of `text`, as 8 hex digits (a configuration fingerprint, not a security hash). */
function fingerprint(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

const isSpace = (ch: string) => /\s/.test(ch);

/** The local rules classifier. */
export class RulesClassifier implements Classifier {
  readonly id: string;
  readonly model = "deltagate-rules";
  readonly local = true;
  readonly combined = false;
  private readonly pii: readonly PiiDetector[];
  private readonly phrases: readonly CompiledPhrase[];
  private readonly patterns: readonly CompiledPattern[];
  private readonly categories: readonly string[];
  private readonly longestPhrase: number;

  /**
   * @param config `SAFETY_RULES` (already validated); missing lists take the defaults.
   * @throws {Error} when a pattern is not a valid regular expression.
   */
  constructor(config: RulesConfig = {}) {
    this.pii = config.pii ?? DEFAULT_PII;
    this.phrases = (config.phrases ?? DEFAULT_PHRASES).map((p) => compilePhrase(p.phrase, p.category));
    this.patterns = (config.patterns ?? []).map((p, index) => {
      try {
        return { regex: new RegExp(p.pattern, p.flags ?? ""), category: p.category, hold: p.hold ?? 32 };
      } catch {
        throw new Error(`SAFETY_RULES.patterns[${index}] is not a valid regular expression`);
      }
    });
    this.categories = [
      ...new Set([
        ...this.pii.map((d) => PII_CATEGORY[d]),
        ...this.phrases.map((p) => p.category),
        ...this.patterns.map((p) => p.category),
      ]),
    ].sort();
    this.longestPhrase = Math.max(0, ...this.phrases.map((p) => p.text.length));
    const normalized = { pii: this.pii, phrases: this.phrases.map((p) => [p.text, p.category]), config };
    this.id = `rules:${fingerprint(JSON.stringify(normalized))}`;
  }

  /** The verdict on one text (synchronous). */
  verdict(text: string): Verdict {
    const categories: Record<string, boolean> = {};
    for (const name of this.categories) categories[name] = false;
    for (const detector of this.pii) if (detects(detector, text)) categories[PII_CATEGORY[detector]] = true;
    for (const phrase of this.phrases) if (phrase.regex.test(text)) categories[phrase.category] = true;
    for (const pattern of this.patterns) if (pattern.regex.test(text)) categories[pattern.category] = true;
    const scores: Record<string, number> = {};
    for (const [name, hit] of Object.entries(categories)) scores[name] = hit ? 1 : 0;
    return { flagged: Object.values(categories).some(Boolean), categories, scores };
  }

  classify(texts: readonly string[]): Promise<Verdict[]> {
    return Promise.resolve(texts.map((text) => this.verdict(text)));
  }

  /**
   * The trailing characters that could still grow into a match: a detector's pending run, the
   * start of a phrase (whole words), or a pattern's declared `hold`.
   */
  holdBack(text: string): number {
    let hold = 0;
    for (const detector of this.pii) hold = Math.max(hold, pendingTail(detector, text, MAX_HOLD));
    hold = Math.max(hold, this.phraseTail(text));
    for (const pattern of this.patterns) hold = Math.max(hold, pattern.hold);
    return Math.min(hold, text.length);
  }

  /** Longest tail of `text` that starts at a word boundary and is a proper prefix of a phrase. */
  private phraseTail(text: string): number {
    const tail = text.slice(-this.longestPhrase).toLowerCase();
    for (let i = 0; i < tail.length; i++) {
      if (i > 0 && /\w/.test(tail[i - 1] ?? "") && /\w/.test(tail[i] ?? "")) continue;
      const candidate = tail.slice(i);
      if (this.phrases.some((p) => startsLike(p.text, candidate))) return tail.length - i;
    }
    return 0;
  }
}

/** True when `candidate` is a proper prefix of `phrase`, any whitespace matching its spaces. */
function startsLike(phrase: string, candidate: string): boolean {
  if (candidate.length >= phrase.length) return false;
  for (let i = 0; i < candidate.length; i++) {
    const c = candidate[i] ?? "";
    const p = phrase[i] ?? "";
    if (c !== p && !(p === " " && isSpace(c))) return false;
  }
  return true;
}
