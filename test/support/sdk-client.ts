/**
 * The real `openai` SDK in HTTP mode, pointed at Deltagate's Worker inside workerd (its `fetch`
 * goes through `exports.default.fetch`), for tests of the HTTP Responses API.
 */
import { exports } from "cloudflare:workers";
import OpenAI from "openai";
import { KEY_A } from "./ws-client.ts";

/** An OpenAI client for Deltagate with `apiKey` (default tenant A's), no retries. */
export function sdkClient(apiKey = KEY_A, headers: Record<string, string> = {}): OpenAI {
  return new OpenAI({
    apiKey,
    baseURL: "http://deltagate.test/v1",
    maxRetries: 0,
    defaultHeaders: headers,
    fetch: (input: string | URL | Request, init?: RequestInit) =>
      exports.default.fetch(new Request(input, init)),
  });
}
