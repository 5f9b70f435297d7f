/**
 * A unique id for test data that goes into model input (markers, prompts, session names): a
 * random UUID with its digits spelled as letters (0→g … 9→p). Deltagate's default safety checks
 * scan input for payment card numbers (src/safety/classifiers/pii.ts), and a UUID's digits, run
 * across its dashes, can form 13–19 digits with an issuer's prefix and a valid Luhn checksum: a
 * test whose marker held one was refused `moderation_blocked` (a flake of a few runs in a hundred
 * over the suite). Still unique: the spelling is one to one.
 */
const LETTERS = "ghijklmnop";

/** A random UUID-shaped id with no digits. */
export function testId(): string {
  return crypto.randomUUID().replace(/[0-9]/g, (d: string) => LETTERS[Number(d)] ?? "g");
}
