import { describe, expect, it } from "vitest";
import { PIECE_UNITS, splitPieces } from "../../../src/store/large-values.ts";

const utf8 = (text: string) => new TextEncoder().encode(text).byteLength;

describe("splitPieces", () => {
  it("joins back to the exact text, each piece within the unit and row budget", () => {
    const text = "a😀漢é\n".repeat(200_000); // 1.2 M units with surrogate pairs everywhere
    const pieces = splitPieces(text);
    expect(pieces.join("")).toBe(text);
    for (const piece of pieces) {
      expect(piece.length).toBeLessThanOrEqual(PIECE_UNITS);
      expect(utf8(piece)).toBeLessThanOrEqual(3 * PIECE_UNITS);
    }
  });

  it("never cuts a surrogate pair in two (SQLite would store a lone half as U+FFFD)", () => {
    for (let offset = 0; offset < 4; offset++) {
      const text = `${"x".repeat(offset)}${"😀".repeat(10)}`;
      const pieces = splitPieces(text, 3);
      expect(pieces.join("")).toBe(text);
      for (const piece of pieces) {
        const last = piece.charCodeAt(piece.length - 1);
        expect(last >= 0xd800 && last <= 0xdbff, JSON.stringify(pieces)).toBe(false);
        expect(new TextDecoder().decode(new TextEncoder().encode(piece))).toBe(piece); // well-formed
      }
    }
  });

  it("keeps short text as one piece and empty text as none", () => {
    expect(splitPieces("short")).toEqual(["short"]);
    expect(splitPieces("")).toEqual([]);
  });
});
