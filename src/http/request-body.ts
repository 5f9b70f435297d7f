/**
 * The body of `POST /v1/responses` as text, whatever its `Content-Encoding`: none (`identity`),
 * `gzip`, `deflate` (zlib) — both with the runtime's `DecompressionStream` — or `zstd` (Codex
 * compresses its HTTP bodies with zstd; workerd's `DecompressionStream` knows only gzip, deflate
 * and deflate-raw, so zstd goes through fzstd, a pure-JS decoder). Owns the decompression limits.
 * Invariants: a compressed body never inflates past `MAX_DECOMPRESSED_BYTES` (413 as soon as the
 * output crosses it, reading stops; a zstd frame that declares a larger window or content is
 * refused before any allocation, zstd-frames.ts); an uncompressed body is read only up to the
 * same limit (a declared `Content-Length` over it is refused before reading); an unknown encoding
 * is a 415, a corrupt body a 400; never a hang, never a 5xx for a client's bytes.
 * Source: https://www.rfc-editor.org/rfc/rfc9110#field.content-encoding,
 *   https://developers.cloudflare.com/workers/runtime-apis/web-standards/#compression-streams
 */
import { Decompress } from "fzstd";
import { ApiError } from "../protocol/errors.ts";
import { MAX_REQUEST_BYTES } from "../protocol/size-limits.ts";
import { checkZstdFrames } from "./zstd-frames.ts";

/**
 * Largest body, decompressed, in bytes: the request limit of src/protocol/size-limits.ts (24 MiB,
 * far above any agent turn, well inside a Worker's 128 MB).
 */
export const MAX_DECOMPRESSED_BYTES = MAX_REQUEST_BYTES;
/** Largest zstd window a frame may declare (8 MiB, the window every zstd decoder must support). */
const MAX_ZSTD_WINDOW = 8 * 1024 * 1024;

/** The encodings accepted, by their `Content-Encoding` token. */
const ACCEPTED = new Set(["identity", "gzip", "x-gzip", "deflate", "zstd"]);

function tooLarge(limit: number): ApiError {
  return new ApiError(413, {
    type: "invalid_request_error",
    code: "request_too_large",
    message: `The request is larger than ${limit} bytes (${limit / (1024 * 1024)} MiB).`,
    param: null,
  });
}

function corrupt(encoding: string): ApiError {
  return new ApiError(400, {
    type: "invalid_request_error",
    code: "invalid_body_encoding",
    message: `The request body is not valid ${encoding} data.`,
    param: null,
  });
}

function unsupported(encoding: string): ApiError {
  return new ApiError(415, {
    type: "invalid_request_error",
    code: "unsupported_content_encoding",
    message: `Content-Encoding '${encoding.slice(0, 40)}' is not supported; use gzip, deflate, zstd or identity.`,
    param: null,
  });
}

/**
 * Reads `request`'s body as UTF-8 text, decoding its `Content-Encoding`.
 * @throws {ApiError} 415 for an encoding other than identity, gzip, deflate or zstd (or several
 *   stacked); 413 when it decompresses past `limit` bytes; 400 when it is not valid data of its
 *   encoding.
 */
export async function readBodyText(request: Request, limit = MAX_DECOMPRESSED_BYTES): Promise<string> {
  const encoding = (request.headers.get("content-encoding") ?? "identity").trim().toLowerCase() || "identity";
  if (!ACCEPTED.has(encoding)) throw unsupported(encoding);
  if (!request.body) return "";
  if (encoding === "identity") {
    const declared = Number(request.headers.get("content-length") ?? Number.NaN);
    if (declared > limit) throw tooLarge(limit);
    return new TextDecoder().decode(await collect(request.body, limit, () => corrupt("identity")));
  }
  if (encoding === "zstd") return new TextDecoder().decode(await zstd(request.body, limit));
  const format = encoding === "deflate" ? "deflate" : "gzip";
  const inflated = request.body.pipeThrough(new DecompressionStream(format));
  return new TextDecoder().decode(await collect(inflated, limit, () => corrupt(encoding)));
}

/**
 * Reads `stream` to the end into one buffer.
 * @throws {ApiError} 413 once more than `limit` bytes arrived (the stream is cancelled), or
 *   `broken()` when the stream errors.
 */
async function collect(
  stream: ReadableStream<Uint8Array>,
  limit: number,
  broken: () => ApiError,
): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    let next: ReadableStreamReadResult<Uint8Array>;
    try {
      next = await reader.read();
    } catch {
      throw broken();
    }
    if (next.done) break;
    total += next.value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit);
    }
    chunks.push(next.value);
  }
  return concat(chunks, total);
}

/** Decompresses a zstd body: compressed size and every frame's declared sizes are checked first. */
async function zstd(body: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array> {
  const compressed = await collect(body, limit, () => corrupt("zstd"));
  const problem = checkZstdFrames(compressed, { maxWindow: MAX_ZSTD_WINDOW, maxContent: limit });
  if (problem === "too-large") throw tooLarge(limit);
  if (problem === "invalid") throw corrupt("zstd");
  const chunks: Uint8Array[] = [];
  let total = 0;
  const decoder = new Decompress((chunk) => {
    total += chunk.byteLength;
    if (total > limit) throw tooLarge(limit);
    chunks.push(chunk);
  });
  try {
    decoder.push(compressed, true);
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw corrupt("zstd");
  }
  return concat(chunks, total);
}

function concat(chunks: readonly Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1 && chunks[0]) return chunks[0];
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}
