/**
 * A walk over the frame headers of a Zstandard body (RFC 8878 §3.1), before anything is
 * decompressed. Why: a decoder allocates each frame's window up front — fzstd allocates the whole
 * declared window (up to 2 GB) or, for a single-segment frame, the declared content size — so a
 * few bytes of header could claim gigabytes. Owns the limits a frame may declare.
 * Invariant: a body accepted here consists of whole frames (zstd or skippable), each declaring a
 * window of at most `maxWindow` bytes (a single-segment frame: content of at most `maxContent`).
 * Source: https://www.rfc-editor.org/rfc/rfc8878#section-3.1
 */

const ZSTD_MAGIC = 0xfd2fb528;
const SKIPPABLE_MASK = 0xfffffff0;
const SKIPPABLE_MAGIC = 0x184d2a50;
const FCS_BYTES = [0, 2, 4, 8] as const;
const DICT_ID_BYTES = [0, 1, 2, 4] as const;

/** Why a body was refused. */
export type FrameProblem = "invalid" | "too-large";

/** Limits a frame header may declare, in bytes. */
export interface FrameLimits {
  /** Largest window of a multi-segment frame. */
  maxWindow: number;
  /** Largest declared content size (single-segment frames; and any declared size). */
  maxContent: number;
}

function u32(data: Uint8Array, at: number): number {
  return (
    ((data[at] ?? 0) |
      ((data[at + 1] ?? 0) << 8) |
      ((data[at + 2] ?? 0) << 16) |
      ((data[at + 3] ?? 0) << 24)) >>>
    0
  );
}

/** Little-endian unsigned integer of `bytes` (≤ 8) bytes, as a float (exact below 2^53). */
function uintLE(data: Uint8Array, at: number, bytes: number): number {
  let value = 0;
  for (let i = bytes - 1; i >= 0; i--) value = value * 256 + (data[at + i] ?? 0);
  return value;
}

/**
 * Checks every frame header of `data`.
 * @returns null when the body is acceptable, else why not.
 */
export function checkZstdFrames(data: Uint8Array, limits: FrameLimits): FrameProblem | null {
  let at = 0;
  if (data.length === 0) return "invalid";
  while (at < data.length) {
    if (at + 8 > data.length) return "invalid";
    const magic = u32(data, at);
    if ((magic & SKIPPABLE_MASK) >>> 0 === SKIPPABLE_MAGIC) {
      at += 8 + u32(data, at + 4);
      continue;
    }
    if (magic !== ZSTD_MAGIC) return "invalid";
    const descriptor = data[at + 4] ?? 0;
    if (descriptor & 0x08) return "invalid"; // reserved bit
    const singleSegment = (descriptor >> 5) & 1;
    const fcsFlag = descriptor >> 6;
    let p = at + 5;
    let window = 0;
    if (!singleSegment) {
      const wd = data[p++] ?? 0;
      const base = 2 ** (10 + (wd >> 3));
      window = base + (base / 8) * (wd & 7);
    }
    p += DICT_ID_BYTES[descriptor & 3] ?? 0;
    const fcsBytes = fcsFlag === 0 ? singleSegment : (FCS_BYTES[fcsFlag] ?? 0);
    const content = uintLE(data, p, fcsBytes) + (fcsBytes === 2 ? 256 : 0);
    p += fcsBytes;
    if (singleSegment) window = content;
    if (window > limits.maxWindow && !singleSegment) return "too-large";
    if ((fcsBytes > 0 || singleSegment) && content > limits.maxContent) return "too-large";
    for (;;) {
      if (p + 3 > data.length) return "invalid";
      const header = (data[p] ?? 0) | ((data[p + 1] ?? 0) << 8) | ((data[p + 2] ?? 0) << 16);
      const last = header & 1;
      const type = (header >> 1) & 3;
      if (type === 3) return "invalid"; // reserved block type
      p += 3 + (type === 1 ? 1 : header >>> 3); // an RLE block stores one byte
      if (last) break;
    }
    if ((descriptor >> 2) & 1) p += 4; // content checksum
    if (p > data.length) return "invalid";
    at = p;
  }
  return at === data.length ? null : "invalid";
}
