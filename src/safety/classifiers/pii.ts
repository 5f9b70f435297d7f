/**
 * PII and secret detectors of the local rules classifier: e-mail addresses, API keys of the
 * common providers, private-key blocks, and payment card numbers (a known issuer prefix, 13–19
 * digits, and a valid Luhn checksum, so timestamps, ids and file sizes are not cards).
 * Each detector also says how much of a text's tail could still grow into a detection, so the
 * streaming output checker can hold exactly that back (src/safety/output-guard.ts).
 * Invariant: pure, synchronous, no network; a detector never reports the matched text itself.
 * Sources: https://en.wikipedia.org/wiki/Luhn_algorithm,
 *   https://en.wikipedia.org/wiki/Payment_card_number (issuer identification numbers).
 */

/** The detectors, by the name used in configuration (`SAFETY_RULES.pii`). */
export const PII_DETECTORS = ["email", "api_key", "private_key", "card_number"] as const;
/** One of `PII_DETECTORS`. */
export type PiiDetector = (typeof PII_DETECTORS)[number];

/** The category each detector reports (`response.moderation` category names). */
export const PII_CATEGORY: Record<PiiDetector, string> = {
  email: "pii/email",
  api_key: "secrets/api_key",
  private_key: "secrets/private_key",
  card_number: "pii/card_number",
};

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/;

/** Key formats of widely used providers (prefix + enough key material to be a real key). */
const API_KEYS: readonly RegExp[] = [
  /\bsk-(?:proj-|svcacct-|admin-|ant-)?[A-Za-z0-9_-]{20,}/, // OpenAI, Anthropic
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/, // AWS access key id
  /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}\b/, // GitHub tokens
  /\bgithub_pat_[A-Za-z0-9_]{40,}/, // GitHub fine-grained tokens
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/, // Slack
  /\bAIza[0-9A-Za-z_-]{35}/, // Google API keys
  /\b(?:sk|rk)_live_[0-9A-Za-z]{16,}/, // Stripe live keys
];

const PRIVATE_KEY = /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----/;
const PRIVATE_KEY_START = "-----BEGIN ";

/** Runs of 13–19 digits, optionally grouped by single spaces or dashes, not inside a longer run. */
const CARD_CANDIDATES = /(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])/g;

/** True for a digit string passing the Luhn checksum. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/** True when `digits` starts with a payment card issuer prefix (Visa, Mastercard, Amex, …). */
function knownIssuer(digits: string): boolean {
  const two = Number(digits.slice(0, 2));
  const three = Number(digits.slice(0, 3));
  const four = Number(digits.slice(0, 4));
  return (
    digits.startsWith("4") || // Visa
    (two >= 51 && two <= 55) ||
    (four >= 2221 && four <= 2720) || // Mastercard
    two === 34 ||
    two === 37 || // American Express
    four === 6011 ||
    (three >= 644 && three <= 649) ||
    two === 65 || // Discover
    (four >= 3528 && four <= 3589) || // JCB
    (three >= 300 && three <= 305) ||
    two === 36 ||
    two === 38 ||
    two === 39 || // Diners Club
    two === 62 // UnionPay
  );
}

/** True when `text` contains a payment card number. */
export function hasCardNumber(text: string): boolean {
  for (const match of text.matchAll(CARD_CANDIDATES)) {
    const digits = match[0].replace(/[ -]/g, "");
    if (digits.length >= 13 && digits.length <= 19 && knownIssuer(digits) && luhnValid(digits)) return true;
  }
  return false;
}

/** True when detector `detector` finds something in `text`. */
export function detects(detector: PiiDetector, text: string): boolean {
  switch (detector) {
    case "email":
      return EMAIL.test(text);
    case "api_key":
      return API_KEYS.some((re) => re.test(text));
    case "private_key":
      return PRIVATE_KEY.test(text);
    case "card_number":
      return hasCardNumber(text);
  }
}

/** Longest suffix of `text` that is a proper prefix of `literal` (case-sensitive). */
function partialLiteral(text: string, literal: string): number {
  for (let n = Math.min(text.length, literal.length - 1); n > 0; n--) {
    if (literal.startsWith(text.slice(-n))) return n;
  }
  return 0;
}

/**
 * How many trailing characters of `text` could still become part of a detection of `detector`
 * when more text is appended (the streaming hold-back), capped at `max`.
 */
export function pendingTail(detector: PiiDetector, text: string, max: number): number {
  const tail = text.slice(-max);
  switch (detector) {
    case "email":
    case "api_key":
      // Addresses and keys are one run of these characters; a run at the end may continue.
      return /[\w.%+@-]*$/.exec(tail)?.[0].length ?? 0;
    case "card_number":
      return /(?:\d[ -]?)*$/.exec(tail)?.[0].length ?? 0;
    case "private_key": {
      const open = tail.lastIndexOf(PRIVATE_KEY_START);
      if (open >= 0 && !tail.slice(open + PRIVATE_KEY_START.length).includes("-----")) {
        return tail.length - open;
      }
      return partialLiteral(tail, PRIVATE_KEY_START);
    }
  }
}
