/**
 * Bounded-cost token counting (src/context/bounded-count.ts, issue #10 item 2): ordinary text is
 * counted exactly as by the tokenizer alone; no pre-token longer than `MAX_PIECE_BYTES` ever
 * reaches byte-pair merging, so counting work grows linearly with the input for every
 * pathological shape of ≥ 1 MiB; the estimate for over-long runs stays close and under the bytes.
 */
import { readdirSync, readFileSync } from "node:fs";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { O200K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/encodingParams/constants";
import { describe, expect, it } from "vitest";
import {
  boundedCounter,
  countByPieces,
  MAX_PIECE_BYTES,
  mayHoldLongPiece,
} from "../../../src/context/bounded-count.ts";
import { loadTokenizer } from "../../../src/context/tokenizer.ts";
import { pathologicalText, SHAPES } from "../../support/token-shapes.ts";

/** The shapes issue #10 reported (the random ones are for bench/tokenizer.ts). */
const ISSUE_SHAPES = SHAPES.filter((shape) => !shape.startsWith("random-"));
const options = { disallowedSpecial: new Set<string>() };
const library = (text: string): number => countTokens(text, options);
const bytesOf = (text: string): number => Buffer.byteLength(text, "utf8");
const longestPiece = (text: string): number => {
  let longest = 0;
  for (const [piece] of text.matchAll(O200K_TOKEN_SPLIT_REGEX)) longest = Math.max(longest, bytesOf(piece));
  return longest;
};

const root = new URL("../../../", import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, root), "utf8");
const sources = readdirSync(new URL("src/", root), { recursive: true, encoding: "utf8" })
  .filter((file) => file.endsWith(".ts"))
  .map((file) => read(`src/${file}`));

/** Ordinary text: prose and Markdown tables (with long padding runs), code, JSON, SSE, Chinese. */
const ordinary: [string, string][] = [
  ["README.md", read("README.md")],
  ["docs/protocol.md", read("docs/protocol.md")],
  ["simulator/README.md", read("simulator/README.md")],
  ["bench/README.md", read("bench/README.md")],
  ["src/**/*.ts", sources.join("\n")],
  ["package-lock.json", read("package-lock.json")],
  ["a recorded SSE stream", read("test/fixtures/sse/responses.sse")],
  [
    "Chinese prose",
    "人工智能是计算机科学的一个分支，它企图了解智能的实质，并生产出一种新的能以人类智能相似的方式做出反应的智能机器。".repeat(
      50,
    ),
  ],
  ["special-token text", "say <|endoftext|> and <|im_start|> literally"],
];

describe("bounded token counting", () => {
  it("keeps the manual's Markdown table padding under the cap (ordinary text stays exact)", () => {
    expect(longestPiece(read("docs/protocol.md"))).toBeGreaterThan(256);
    expect(longestPiece(read("docs/protocol.md"))).toBeLessThanOrEqual(MAX_PIECE_BYTES);
  });

  it.each(ordinary)("counts %s exactly as the tokenizer alone", (_, text) => {
    const exact = library(text);
    expect(boundedCounter(library)(text)).toBe(exact);
    // The piecewise path too (cut between pre-tokens), though this text would not need it.
    expect(countByPieces(text, library)).toBe(exact);
  });

  it("counts a pre-token at the cap exactly, and a longer one as its chunks plus the rest exactly", () => {
    const before = "Before the run,\n ";
    const after = "\tand after it: done.";
    const atCap = ` ${"x".repeat(MAX_PIECE_BYTES - 1)}`; // one pre-token of exactly MAX_PIECE_BYTES
    expect(countByPieces(before + atCap + after, library)).toBe(library(before + atCap + after));
    const twice = ` ${"x".repeat(2 * MAX_PIECE_BYTES - 1)}`; // one pre-token, two chunks
    const chunks = [twice.slice(0, MAX_PIECE_BYTES), twice.slice(MAX_PIECE_BYTES)];
    const expected = library(before) + library(chunks[0] ?? "") + library(chunks[1] ?? "") + library(after);
    expect(countByPieces(before + twice + after, library)).toBe(expected);
  });

  it("never cuts a character in two when chunking", () => {
    const seen: string[] = [];
    const emoji = "🎉".repeat(MAX_PIECE_BYTES); // 4 bytes each, one pre-token
    boundedCounter((part) => {
      seen.push(part);
      return 1;
    })(`x${emoji}`);
    expect(seen.join("")).toBe(`x${emoji}`);
    for (const part of seen) expect(part).toMatch(/^(?:[^\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF])*$/);
  });

  it("scans conservatively: no pre-token over the cap when the scan says none can be", () => {
    // Runs of every class the split pattern cares about, lengths around the threshold.
    const classes = [
      "a",
      "Z",
      "é",
      "日",
      "🎉",
      "\u0301",
      " ",
      "\t",
      "\n",
      "\r\n",
      "/",
      "-",
      "#",
      "\u00a0",
      "\u3000",
      "7",
      "'s",
    ];
    let seed = 1;
    const random = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    let passed = 0;
    let flagged = 0;
    for (let sample = 0; sample < 1000; sample++) {
      let text = "";
      while (text.length < 400) {
        const unit = classes[Math.floor(random() * classes.length)] ?? "a";
        text += unit.repeat(1 + Math.floor(random() * (random() < 0.1 ? 200 : 8)));
      }
      if (mayHoldLongPiece(text)) flagged++;
      else {
        passed++;
        expect(longestPiece(text)).toBeLessThanOrEqual(MAX_PIECE_BYTES);
      }
    }
    // Both paths were exercised.
    expect(passed).toBeGreaterThan(50);
    expect(flagged).toBeGreaterThan(50);
  });

  it.each(SHAPES)("flags %s as possibly holding a long pre-token", (shape) => {
    expect(mayHoldLongPiece(pathologicalText(shape, 64 * 1024))).toBe(
      shape !== "hex-random" && shape !== "random-words",
    );
  });

  it.each(SHAPES)(
    "never merges a pre-token over the cap, and reads each character once: %s, 1 MiB",
    (shape) => {
      const text = pathologicalText(shape, 1 << 20);
      const seen: string[] = [];
      const tokens = boundedCounter((part) => {
        seen.push(part);
        return library(part.slice(0, 64)); // the real split, cheaply: only the structure matters here
      })(text);
      expect(tokens).toBeGreaterThan(0);
      expect(seen.join("")).toBe(text);
      for (const part of seen) expect(longestPiece(part)).toBeLessThanOrEqual(MAX_PIECE_BYTES);
    },
  );

  it.each(SHAPES)("estimates a long run closely and never above its bytes: %s, 8 KiB", (shape) => {
    const text = pathologicalText(shape, 8 * 1024);
    const exact = library(text); // small enough for the uncapped tokenizer
    const estimate = boundedCounter(library)(text);
    const cuts = Math.ceil(bytesOf(text) / MAX_PIECE_BYTES);
    expect(Math.abs(estimate - exact)).toBeLessThanOrEqual(cuts);
    expect(estimate).toBeLessThanOrEqual(bytesOf(text));
  });

  it.each(ISSUE_SHAPES)("counts %s of 1 MiB in bounded time through loadTokenizer", async (shape) => {
    const count = await loadTokenizer();
    const text = pathologicalText(shape, 1 << 20);
    const start = performance.now();
    const tokens = count(text);
    // A sanity guard only (speed belongs in bench/tokenizer.ts): without the cap these took
    // about 25 minutes each; with it 0.1–2 s on an idle machine, so 15 s tolerates a loaded one.
    expect(performance.now() - start).toBeLessThan(15_000);
    expect(tokens).toBeGreaterThan(0);
    expect(tokens).toBeLessThanOrEqual(bytesOf(text));
  });
});
