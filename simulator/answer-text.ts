/**
 * Deterministic answer text: N pseudo-random three-letter words seeded from the input, so the
 * same context always yields the same text. Each word plus its separator is 4 bytes, so with the
 * 4-bytes-per-token estimate (tokens.ts) N words measure exactly N tokens.
 */

const WORDS = (
  "the sky sea map key log run set add fix sum net web dev api box bit row col tab end top " +
  "new old big one two six ten red tan ink oak elm ice fog sun day now yes may can few all"
).split(" ");

/** mulberry32 PRNG over a 32-bit seed; returns a function yielding floats in [0, 1). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Returns `tokens` words (each 3 ASCII letters) separated by spaces, first word capitalized,
 * ending with ".": byte length 4×tokens, i.e. exactly `tokens` estimated tokens. 0 → "".
 */
export function answerText(seed: number, tokens: number): string {
  if (tokens <= 0) return "";
  const rand = mulberry32(seed);
  const words: string[] = [];
  for (let i = 0; i < tokens; i++) words.push(WORDS[Math.floor(rand() * WORDS.length)] ?? "sim");
  const first = words[0] ?? "sim";
  words[0] = first.charAt(0).toUpperCase() + first.slice(1);
  return `${words.join(" ")}.`;
}
