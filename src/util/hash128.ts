/**
 * A fast, synchronous 128-bit string hash (MurmurHash3's x86_128 mixing, over UTF-16 code units
 * two at a time), as 32 hex characters. Used where a turn needs many short hashes on its hot path
 * and WebCrypto's `digest` (asynchronous) does not fit: the rolling prefix hashes of transparent
 * deltas (src/resend/) and the affinity key of stateless conversations (src/worker/session-id.ts).
 * It is not a cryptographic hash: every use compares values the client never sees, within one
 * tenant's session, so nobody can aim a collision at a value; a chance collision has probability
 * about 2^-128 per comparison.
 * Source: https://github.com/aappleby/smhasher/blob/master/src/MurmurHash3.cpp (the mixing steps).
 */

const C1 = 0x239b961b;
const C2 = 0xab0e9789;
const C3 = 0x38b34ae5;
const C4 = 0xa1e38b93;

function rotl(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r)) | 0;
}

function fmix(h: number): number {
  let x = h;
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x;
}

const HEX = "0123456789abcdef";

function hex(x: number): string {
  let out = "";
  for (let shift = 28; shift >= 0; shift -= 4) out += HEX[(x >>> shift) & 15];
  return out;
}

/** The 128-bit hash of `text` (its UTF-16 code units), as 32 lowercase hex characters. */
export function hash128(text: string, seed = 0): string {
  let h1 = seed;
  let h2 = seed;
  let h3 = seed;
  let h4 = seed;
  const n = text.length;
  const blocks = n - (n % 8);
  let i = 0;
  for (; i < blocks; i += 8) {
    let k1 = text.charCodeAt(i) | (text.charCodeAt(i + 1) << 16);
    let k2 = text.charCodeAt(i + 2) | (text.charCodeAt(i + 3) << 16);
    let k3 = text.charCodeAt(i + 4) | (text.charCodeAt(i + 5) << 16);
    let k4 = text.charCodeAt(i + 6) | (text.charCodeAt(i + 7) << 16);
    k1 = Math.imul(rotl(Math.imul(k1, C1), 15), C2);
    h1 = (h1 ^ k1) | 0;
    h1 = (rotl(h1, 19) + h2) | 0;
    h1 = (Math.imul(h1, 5) + 0x561ccd1b) | 0;
    k2 = Math.imul(rotl(Math.imul(k2, C2), 16), C3);
    h2 = (h2 ^ k2) | 0;
    h2 = (rotl(h2, 17) + h3) | 0;
    h2 = (Math.imul(h2, 5) + 0x0bcaa747) | 0;
    k3 = Math.imul(rotl(Math.imul(k3, C3), 17), C4);
    h3 = (h3 ^ k3) | 0;
    h3 = (rotl(h3, 15) + h4) | 0;
    h3 = (Math.imul(h3, 5) + 0x96cd1c35) | 0;
    k4 = Math.imul(rotl(Math.imul(k4, C4), 18), C1);
    h4 = (h4 ^ k4) | 0;
    h4 = (rotl(h4, 13) + h1) | 0;
    h4 = (Math.imul(h4, 5) + 0x32ac3b17) | 0;
  }
  // The tail: up to 7 code units, packed into up to four 32-bit words.
  if (i < n) {
    const at = (j: number) => (i + j < n ? text.charCodeAt(i + j) : 0);
    h1 ^= Math.imul(rotl(Math.imul(at(0) | (at(1) << 16), C1), 15), C2);
    h2 ^= Math.imul(rotl(Math.imul(at(2) | (at(3) << 16), C2), 16), C3);
    h3 ^= Math.imul(rotl(Math.imul(at(4) | (at(5) << 16), C3), 17), C4);
    h4 ^= Math.imul(rotl(Math.imul(at(6) | (at(7) << 16), C4), 18), C1);
  }
  // Length in bytes of the UTF-16 input, as MurmurHash3 mixes in its byte length.
  const length = n * 2;
  h1 ^= length;
  h2 ^= length;
  h3 ^= length;
  h4 ^= length;
  h1 = (h1 + h2 + h3 + h4) | 0;
  h2 = (h2 + h1) | 0;
  h3 = (h3 + h1) | 0;
  h4 = (h4 + h1) | 0;
  h1 = fmix(h1);
  h2 = fmix(h2);
  h3 = fmix(h3);
  h4 = fmix(h4);
  h1 = (h1 + h2 + h3 + h4) | 0;
  h2 = (h2 + h1) | 0;
  h3 = (h3 + h1) | 0;
  h4 = (h4 + h1) | 0;
  return hex(h1) + hex(h2) + hex(h3) + hex(h4);
}
