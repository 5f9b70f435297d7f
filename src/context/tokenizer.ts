/**
 * Token counting with OpenAI's `o200k_base` byte-pair encoding (the encoding of GPT-4o, GPT-4.1,
 * GPT-5 and the o-series) through `gpt-tokenizer`: pure JavaScript with its rank table bundled as a
 * module, so it runs in workerd without WASM and without fetching anything at run time.
 * Owns loading the tokenizer. The rank table is ~2.4 MB of source (~1 MB gzipped in the bundle)
 * and takes a few hundred ms of CPU to evaluate, so it is imported lazily on the first count, once
 * per isolate (an isolate serves many Durable Object instances): Worker requests that never count
 * tokens (auth, routing, upgrades) never pay for it.
 * Invariants: counting never throws. Text that contains special-token strings such as
 * `<|endoftext|>` is counted as plain text, which is what a model sees for user text. Counting
 * costs at most a small bound per byte for any input (bounded-count.ts): pre-tokens longer than
 * `MAX_PIECE_BYTES` are counted in chunks, an estimate only for such pathological runs.
 * Source: https://github.com/niieani/gpt-tokenizer, https://github.com/openai/tiktoken
 */
import { boundedCounter } from "./bounded-count.ts";

/** Counts the tokens of a string (0 for ""). Synchronous once loaded. */
export type CountTokens = (text: string) => number;

/**
 * Entries of the tokenizer's cache of merged pre-tokens (the library's default is 100,000). It
 * evicts the oldest entry by deleting a Map's first key, and V8 then skips every deleted slot
 * before the next first key, so an eviction costs up to the cache's size: with the default, 1 MB
 * of random short words took 3 s to count while the cache filled and about 20 s per MB after
 * (`node bench/tokenizer.ts --library`). Its size, times `MAX_PIECE_BYTES` per entry, also caps
 * its memory (about 1 MB here). A small cache keeps both bounded and still serves repeated pieces.
 */
export const MERGE_CACHE_SIZE = 1024;

let loading: Promise<CountTokens> | null = null;

/**
 * Loads the `o200k_base` tokenizer (first call) or returns the loaded one.
 * @returns a counter of tokens per string.
 * @throws whatever the module import raises; a failed load is retried by the next call.
 */
export function loadTokenizer(): Promise<CountTokens> {
  loading ??= import("gpt-tokenizer/encoding/o200k_base").then(
    (encoding): CountTokens => {
      // An empty disallow list: special-token strings are ordinary text, never an error.
      const options = { disallowedSpecial: new Set<string>() };
      encoding.setMergeCacheSize(MERGE_CACHE_SIZE);
      return boundedCounter((text) => encoding.countTokens(text, options));
    },
    (cause: unknown) => {
      loading = null;
      throw cause;
    },
  );
  return loading;
}
