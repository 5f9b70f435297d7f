/**
 * The HTTP side of the upstream toolkit: POSTing a JSON body that answers with an SSE stream, for
 * the HTTP adapters (Responses HTTP, Chat Completions, Anthropic Messages, Gemini). Owns the
 * request headers (the key as a bearer token or, for Anthropic, `x-api-key`, for Gemini
 * `x-goog-api-key`; `accept: text/event-stream`;
 * an adapter's fixed extra headers) and the "unreachable" failure.
 * Invariant: a returned response is 2xx with a body; every other outcome is an `UpstreamError`
 * (or the abort itself).
 */
import { failureOf } from "./error-mapping.ts";
import { UpstreamError } from "./upstream.ts";

/** Connection settings shared by the HTTP adapters. */
export interface HttpUpstreamOptions {
  /** Base URL including `/v1`, no trailing slash. */
  baseUrl: string;
  /** Bearer token, or null. */
  apiKey: string | null;
  /** `fetch` to use (defaults to the global). */
  fetch?: typeof fetch;
  /** How the key is sent: `Authorization: Bearer` (default), Anthropic's `x-api-key` or Google's `x-goog-api-key`. */
  keyHeader?: "bearer" | "x-api-key" | "x-goog-api-key";
  /** Fixed extra request headers (Anthropic: `anthropic-version`). */
  headers?: Readonly<Record<string, string>>;
}

/**
 * POSTs a JSON body to `{baseUrl}{path}` asking for an SSE stream.
 * @returns the 2xx response, whose body is present.
 * @throws {UpstreamError} 502 `upstream_unavailable` when the upstream cannot be reached, or the
 *   mapped error of a non-2xx answer (`failure`, default `failureOf`: OpenAI's error envelope);
 *   the abort itself when `signal` fired.
 */
export async function postStreaming(
  options: HttpUpstreamOptions,
  path: string,
  body: string,
  signal: AbortSignal,
  failure: (response: Response) => Promise<UpstreamError> = failureOf,
): Promise<Response & { body: ReadableStream<Uint8Array> }> {
  const response = await post(options, path, body, signal, "text/event-stream");
  if (!response.ok || !response.body) throw await failure(response);
  return response as Response & { body: ReadableStream<Uint8Array> };
}

/**
 * POSTs a JSON body to `{baseUrl}{path}` with the route's key, accepting `accept`.
 * @throws {UpstreamError} 502 `upstream_unavailable` when the upstream cannot be reached; the
 *   abort itself when `signal` fired.
 */
async function post(
  options: HttpUpstreamOptions,
  path: string,
  body: string,
  signal: AbortSignal,
  accept: string,
): Promise<Response> {
  const headers: Record<string, string> = { ...options.headers, "content-type": "application/json", accept };
  if (options.apiKey && options.keyHeader && options.keyHeader !== "bearer") {
    headers[options.keyHeader] = options.apiKey;
  } else if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  try {
    return await (options.fetch ?? fetch)(`${options.baseUrl}${path}`, {
      method: "POST",
      headers,
      body,
      signal,
    });
  } catch (cause) {
    signal.throwIfAborted();
    throw new UpstreamError(
      502,
      "upstream_unavailable",
      `Could not reach the upstream model server (${String(cause)}).`,
    );
  }
}

/**
 * POSTs a JSON body to `{baseUrl}{path}` and reads the JSON answer (the unary endpoints:
 * `/responses/compact`, `/responses/input_tokens`).
 * @returns the parsed 2xx body.
 * @throws {UpstreamError} as `postStreaming`, and 502 `upstream_error` for a body that is not JSON.
 */
export async function postJson(
  options: HttpUpstreamOptions,
  path: string,
  body: string,
  signal: AbortSignal,
): Promise<unknown> {
  const response = await post(options, path, body, signal, "application/json");
  if (!response.ok) throw await failureOf(response);
  try {
    return await response.json();
  } catch {
    throw new UpstreamError(502, "upstream_error", "The upstream answered with a body that is not JSON.");
  }
}
