/**
 * The zstd frame-header walk (src/http/zstd-frames.ts) on real frames made by Node's zstd: a
 * normal body passes, concatenated and skippable frames pass, a frame that declares a window or
 * content size past the limits is refused before anything is decompressed, and truncated or
 * foreign bytes are invalid.
 */
import { zstdCompressSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { checkZstdFrames } from "../../../src/http/zstd-frames.ts";

const limits = { maxWindow: 8 * 1024 * 1024, maxContent: 32 * 1024 * 1024 };
const json = Buffer.from(JSON.stringify({ model: "m", input: "x".repeat(5000) }));

describe("checkZstdFrames", () => {
  it("accepts a body, concatenated frames and a skippable frame", () => {
    const frame = zstdCompressSync(json);
    expect(checkZstdFrames(frame, limits)).toBeNull();
    const skippable = Buffer.from([0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3]);
    expect(checkZstdFrames(Buffer.concat([frame, skippable, frame]), limits)).toBeNull();
  });

  it("refuses a declared content size or window past the limits", () => {
    const big = zstdCompressSync(Buffer.alloc(40 * 1024 * 1024), { pledgedSrcSize: 40 * 1024 * 1024 });
    expect(checkZstdFrames(big, limits)).toBe("too-large");
    // A hand-made header: window descriptor 0xF8 = 2^(10+31) bytes, no content size.
    const window = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xf8, 0x01, 0x00, 0x00]);
    expect(checkZstdFrames(window, limits)).toBe("too-large");
    // Single segment, 4-byte content size of 3 GB.
    const single = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0xa0, 0x00, 0x5e, 0xd0, 0xb2, 0x01, 0x00, 0x00]);
    expect(checkZstdFrames(single, limits)).toBe("too-large");
  });

  it("finds truncated, empty and foreign bodies invalid", () => {
    const frame = zstdCompressSync(json);
    expect(checkZstdFrames(frame.subarray(0, frame.length - 5), limits)).toBe("invalid");
    expect(checkZstdFrames(new Uint8Array(0), limits)).toBe("invalid");
    expect(checkZstdFrames(Buffer.from("not zstd at all"), limits)).toBe("invalid");
  });
});
