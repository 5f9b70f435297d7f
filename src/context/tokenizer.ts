/**
 * Token counting with OpenAI's `o200k_base` byte-pair encoding (the encoding of GPT-4o, GPT-4.1,
 * GPT-5 and the o-series) through `gpt-tokenizer`: pure JavaScript with its rank table bundled as a
 * module, so it runs in workerd without WASM and without fetching anything at run time.
 * Owns loading the tokenizer. The rank table is ~2.4 MB of source (~1 MB gzipped in the bundle)
 * and takes a few hundred ms of CPU to evaluate, so it is imported lazily on the first count, once
 * per isolate (an isolate serves many Durable Object instances): Worker requests that never count
 * tokens (auth, routing, upgrades) never pay for it.
 * Invariant: counting never throws. Text that contains special-token strings such as
 * `<|endoftext|>` is counted as plain text, which is what a model sees for user text.
 * Source: https://github.com/niieani/gpt-tokenizer, https://github.com/openai/tiktoken
 */

/** Counts the tokens of a string (0 for ""). Synchronous once loaded. */
export type CountTokens = (text: string) => number;

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
      return (text) => (text === "" ? 0 : encoding.countTokens(text, options));
    },
    (cause: unknown) => {
      loading = null;
      throw cause;
    },
  );
  return loading;
}
