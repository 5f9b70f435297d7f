/**
 * The pathological token-counting inputs of issue #10 (long runs that the `o200k_base` split
 * pattern keeps as one pre-token), shared by the unit test of bounded counting and
 * bench/tokenizer.ts. Deterministic: random shapes use a seeded PRNG.
 */

/** The shapes, by name. */
export const SHAPES = [
  "repeated-char",
  "base64-zeros",
  "progress-bar",
  "unbroken-cjk",
  "hex-random",
  "hex-ff",
  "spaces",
  "random-letters",
  "random-words",
] as const;

export type Shape = (typeof SHAPES)[number];

/** mulberry32: a small seeded PRNG. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomFrom(alphabet: string, length: number, seed: number): string {
  const random = prng(seed);
  const out: string[] = [];
  for (let i = 0; i < length; i++) out.push(alphabet[Math.floor(random() * alphabet.length)] ?? "");
  return out.join("");
}

/**
 * A text of the shape, about `bytes` UTF-8 bytes long.
 * - repeated-char: "aaaa…"; base64-zeros: the base64 of a zero-filled file ("AAAA…");
 * - progress-bar: "[#####…]"; unbroken-cjk: random CJK ideographs, no punctuation;
 * - hex-random: random hex digits; hex-ff: the hex of a 0xff-filled file ("ffff…");
 * - spaces: one run of spaces; random-letters: random lowercase letters, no spaces;
 * - random-words: random lowercase words of 3 to 12 letters and a space (every pre-token is short,
 *   but most are new, which stresses the tokenizer's cache of merged pre-tokens).
 */
export function pathologicalText(shape: Shape, bytes: number): string {
  switch (shape) {
    case "repeated-char":
      return "a".repeat(bytes);
    case "base64-zeros":
      return btoa("\0".repeat(Math.floor((bytes * 3) / 4)));
    case "progress-bar":
      return `[${"#".repeat(bytes - 2)}]`;
    case "unbroken-cjk": {
      const random = prng(7);
      const out: string[] = [];
      for (let i = 0; i < Math.floor(bytes / 3); i++)
        out.push(String.fromCharCode(0x4e00 + Math.floor(random() * 20000)));
      return out.join("");
    }
    case "hex-random":
      return randomFrom("0123456789abcdef", bytes, 11);
    case "hex-ff":
      return "f".repeat(bytes);
    case "spaces":
      return " ".repeat(bytes);
    case "random-letters":
      return randomFrom("abcdefghijklmnopqrstuvwxyz", bytes, 13);
    case "random-words": {
      const letters = randomFrom("abcdefghijklmnopqrstuvwxyz", bytes, 17);
      const words: string[] = [];
      for (let i = 0, k = 0; i < letters.length; k++) {
        const length = 3 + ((k * 7) % 10);
        words.push(letters.slice(i, i + length));
        i += length + 1;
      }
      return words.join(" ");
    }
  }
}
