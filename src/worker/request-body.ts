/**
 * Reading a JSON request body within the request size limit (src/protocol/size-limits.ts). Owns
 * the byte count: a declared `Content-Length` over the limit is refused before reading, and a body
 * without one (chunked) is read only up to the limit, so no client can make the Worker buffer more.
 * Invariant: a body over `MAX_REQUEST_BYTES` is never parsed.
 */
import { parseClientJson } from "../protocol/json-limits.ts";
import { MAX_REQUEST_BYTES, requestTooLarge } from "../protocol/size-limits.ts";

/**
 * The body of `request` parsed as JSON.
 * @throws {ApiError} 413 `request_too_large` over `maxBytes`; 400 `invalid_json` when it is not JSON.
 */
export async function readJsonBody(request: Request, maxBytes = MAX_REQUEST_BYTES): Promise<unknown> {
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  if (declared > maxBytes) throw requestTooLarge();
  // Depth-limited before JSON.parse (src/protocol/json-limits.ts): deep nesting is a 400, never
  // a stack overflow.
  return parseClientJson(await readText(request, maxBytes));
}

async function readText(request: Request, maxBytes: number): Promise<string> {
  if (!request.body) return "";
  const reader = request.body.getReader();
  const decoder = new TextDecoder();
  const parts: string[] = [];
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    received += value.byteLength;
    if (received > maxBytes) {
      await reader.cancel().catch(() => {});
      throw requestTooLarge();
    }
    parts.push(decoder.decode(value, { stream: true }));
  }
  parts.push(decoder.decode());
  return parts.join("");
}
