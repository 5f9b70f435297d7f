/**
 * Compressed request bodies on `POST /v1/responses` (issue #8 item 5): gzip, deflate and zstd
 * bodies (Codex zstd-compresses its HTTP bodies) create responses end to end; a body that would
 * inflate past 32 MiB (gzip, or zstd with or without a declared size) is refused with 413 without
 * hanging; an unknown encoding is a 415 and a corrupt body a 400, both in OpenAI's error envelope.
 */
import { describe, expect, it } from "vitest";
import { MAX_DECOMPRESSED_BYTES } from "../../src/http/request-body.ts";
import { KEY_A, workerFetch } from "../support/ws-client.ts";
import { fromBase64, ZSTD_BODY, ZSTD_BOMB_SIZED, ZSTD_BOMB_UNSIZED } from "../support/zstd-fixtures.ts";

async function compress(text: string | Uint8Array, format: "gzip" | "deflate"): Promise<Uint8Array> {
  const bytes = typeof text === "string" ? new TextEncoder().encode(text) : text;
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream(format));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function post(body: BodyInit, encoding: string): Promise<Response> {
  return workerFetch("/v1/responses", {
    method: "POST",
    headers: {
      authorization: `Bearer ${KEY_A}`,
      "content-type": "application/json",
      "content-encoding": encoding,
    },
    body,
  });
}

const request = (marker: string) =>
  JSON.stringify({ model: "deltagate-sim", input: `${marker} compressed [sim:tokens=8]` });

describe("compressed request bodies", () => {
  for (const format of ["gzip", "deflate"] as const) {
    it(`creates a response from a ${format} body`, async () => {
      const res = await post(await compress(request(format), format), format);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { status: string }).status).toBe("completed");
    });
  }

  it("creates a response from a zstd body", async () => {
    const res = await post(fromBase64(ZSTD_BODY), "zstd");
    expect(res.status).toBe(200);
    expect(((await res.json()) as { status: string }).status).toBe("completed");
  });

  it("refuses bodies that inflate past the limit with 413", async () => {
    const zeros = new Uint8Array(MAX_DECOMPRESSED_BYTES + 1024 * 1024);
    const bombs: Array<[BodyInit, string]> = [
      [await compress(zeros, "gzip"), "gzip"],
      [fromBase64(ZSTD_BOMB_SIZED), "zstd"],
      [fromBase64(ZSTD_BOMB_UNSIZED), "zstd"],
    ];
    for (const [body, encoding] of bombs) {
      const res = await post(body, encoding);
      expect(res.status, encoding).toBe(413);
      expect(await res.json()).toMatchObject({
        error: { type: "invalid_request_error", code: "request_too_large" },
      });
    }
  });

  it("answers 415 for an unknown encoding and 400 for a corrupt body", async () => {
    const br = await post(request("br"), "br");
    expect(br.status).toBe(415);
    expect(await br.json()).toMatchObject({
      error: { type: "invalid_request_error", code: "unsupported_content_encoding", param: null },
    });
    for (const encoding of ["gzip", "deflate", "zstd"]) {
      const res = await post("definitely not compressed", encoding);
      expect(res.status, encoding).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: "invalid_body_encoding" } });
    }
  });
});
