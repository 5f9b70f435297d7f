/**
 * Parsing of an upstream's "wait before retrying" hint. Owns the header precedence: OpenAI's
 * `retry-after-ms` (milliseconds) first, then the standard `Retry-After` (delay-seconds or an
 * HTTP-date, RFC 9110 §10.2.3), as the OpenAI SDKs read them.
 * Invariant: the result is a finite, non-negative number of ms, or null (absent or unparseable).
 * Source: https://www.rfc-editor.org/rfc/rfc9110#field.retry-after,
 *   https://github.com/openai/openai-node (`retry-after-ms` handling in its retry logic).
 */

/**
 * The wait the upstream asked for.
 * @param headers the failed response's headers.
 * @param now clock in ms (for an HTTP-date).
 * @returns ms to wait (≥ 0), or null when no usable header is present.
 */
export function retryAfterMs(headers: Headers, now = Date.now()): number | null {
  const ms = headers.get("retry-after-ms");
  if (ms !== null && ms.trim() !== "") {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return value;
  }
  const raw = headers.get("retry-after")?.trim();
  if (!raw) return null;
  if (/^\d+(\.\d+)?$/.test(raw)) return Number(raw) * 1000;
  const date = Date.parse(raw);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
