/**
 * The `openai` SDK client of one HTTP agent loop (Responses or Chat Completions): no SDK retries
 * (a failed turn is a failed loop), the loop's own `fetch` (loop-fetch.ts), and the JSON body
 * size of the latest request, which the transports report as the turn's payload bytes.
 * Owns nothing beyond the client; the loop's `fetch` is closed by its owner.
 */
import OpenAI from "openai";
import type { LoopFetch } from "./loop-fetch.ts";

/** What a loop's SDK client needs. */
export interface LoopClientOptions {
  /** Base URL including `/v1`. */
  baseURL: string;
  apiKey: string;
  loopFetch: LoopFetch;
  turnTimeoutMs: number;
}

/** A loop's SDK client and the body size of its latest request. */
export interface LoopClient {
  client: OpenAI;
  /** UTF-8 bytes of the latest request body (0 for none). */
  lastBodyBytes(): number;
}

/** Creates the SDK client of one loop. */
export function loopClient(options: LoopClientOptions): LoopClient {
  let lastBodyBytes = 0;
  const countingFetch = (input: string | URL, init?: RequestInit): Promise<Response> => {
    const body = init?.body;
    lastBodyBytes = typeof body === "string" ? Buffer.byteLength(body, "utf8") : 0;
    return options.loopFetch.fetch(input, init);
  };
  const client = new OpenAI({
    apiKey: options.apiKey,
    baseURL: options.baseURL,
    maxRetries: 0,
    timeout: options.turnTimeoutMs,
    fetch: countingFetch as unknown as typeof fetch,
  });
  return { client, lastBodyBytes: () => lastBodyBytes };
}
