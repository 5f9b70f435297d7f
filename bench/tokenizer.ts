/**
 * `node bench/tokenizer.ts [--library] [bytes…]`: time of one token count per input shape, through
 * Deltagate's counter (src/context/tokenizer.ts: the tokenizer with the pre-token cap of
 * src/context/bounded-count.ts), or with `--library` through `gpt-tokenizer` alone (the behaviour
 * before the cap). Sizes default to 1 MiB; beware that `--library` is quadratic on the
 * pathological shapes (32 KiB ≈ 1.5 s, 1 MiB ≈ 25 min), so give it small sizes.
 * Shapes: prose (this repo's README), code (src/), Chinese prose, and the pathological shapes of
 * issue #10: one repeated character, base64 of a zero-filled file, a progress bar, unbroken CJK,
 * long hex (random, and of a 0xff-filled file), a run of spaces, random letters without spaces
 * (the slowest shape for the capped counter), and random short words (which fill the tokenizer's
 * cache of merged pre-tokens). Inputs are counted once each, in this order, in one process, so the
 * tokenizer's caches carry over from one input to the next, as in a Worker isolate.
 */
import { readdirSync, readFileSync } from "node:fs";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { loadTokenizer } from "../src/context/tokenizer.ts";
import { pathologicalText, SHAPES } from "../test/support/token-shapes.ts";

const args = process.argv.slice(2);
const library = args.includes("--library");
const sizes = args.filter((a) => a !== "--library").map(Number);
if (sizes.length === 0) sizes.push(1 << 20);

const options = { disallowedSpecial: new Set<string>() };
const count = library ? (text: string) => countTokens(text, options) : await loadTokenizer();

const fill = (source: string, bytes: number): string =>
  source.repeat(Math.ceil(bytes / source.length)).slice(0, bytes);
const code = readdirSync("src", { recursive: true, encoding: "utf8" })
  .filter((f) => f.endsWith(".ts"))
  .map((f) => readFileSync(`src/${f}`, "utf8"))
  .join("\n");
const normal: Record<string, (bytes: number) => string> = {
  prose: (bytes) => fill(readFileSync("README.md", "utf8"), bytes),
  code: (bytes) => fill(code, bytes),
  chinese: (bytes) =>
    fill(
      "人工智能是计算机科学的一个分支，它企图了解智能的实质，并生产出一种新的能以人类智能相似的方式做出反应的智能机器。",
      Math.floor(bytes / 3),
    ),
};

console.log(`counter: ${library ? "gpt-tokenizer alone (before)" : "Deltagate (capped pre-tokens)"}`);
for (const [name, make] of [
  ...Object.entries(normal),
  ...SHAPES.map((s) => [s, (b: number) => pathologicalText(s, b)] as const),
]) {
  for (const size of sizes) {
    const text = make(size);
    const start = performance.now();
    const tokens = count(text);
    const ms = performance.now() - start;
    const bytes = Buffer.byteLength(text);
    console.log(
      `${name.padEnd(14)} ${String(bytes).padStart(9)} B  ${ms.toFixed(0).padStart(6)} ms  ${((ms * 1000) / bytes).toFixed(2).padStart(6)} µs/B  ${tokens} tokens`,
    );
  }
}
