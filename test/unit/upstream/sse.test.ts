/**
 * Server-Sent Events parsing (src/upstream/sse.ts) against the WHATWG rules
 * (https://html.spec.whatwg.org/multipage/server-sent-events.html#parsing-an-event-stream):
 * field parsing, comments, multi-line data, the three line endings — also when a chunk boundary
 * falls between CR and LF or inside a UTF-8 character — and abort.
 */
import { describe, expect, it } from "vitest";
import { parseSse, type SseEvent } from "../../../src/upstream/sse.ts";

/** A body delivering `chunks` (strings or raw bytes) one read at a time. */
function body(chunks: Array<string | Uint8Array>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks)
        controller.enqueue(typeof chunk === "string" ? encoder.encode(chunk) : chunk);
      controller.close();
    },
  });
}

async function events(chunks: Array<string | Uint8Array>): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const event of parseSse(body(chunks))) out.push(event);
  return out;
}

describe("parseSse", () => {
  it("parses event and data fields, defaults the event to message, skips comments and unknown fields", async () => {
    expect(
      await events([
        ': a comment\nevent: response.created\ndata: {"a":1}\n\n',
        "id: 7\nretry: 10\ndata:no space\n\n",
      ]),
    ).toEqual([
      { event: "response.created", data: '{"a":1}' },
      { event: "message", data: "no space" },
    ]);
  });

  it("joins multi-line data with \\n and ignores events without data", async () => {
    expect(await events(["event: ping\n\ndata: one\ndata: two\ndata\n\n"])).toEqual([
      { event: "message", data: "one\ntwo\n" },
    ]);
  });

  it("accepts LF, CR and CRLF line endings", async () => {
    expect(await events(["data: lf\n\n", "data: cr\r\r", "data: crlf\r\n\r\n"])).toEqual([
      { event: "message", data: "lf" },
      { event: "message", data: "cr" },
      { event: "message", data: "crlf" },
    ]);
  });

  it("yields an event only once its blank line arrived, whatever the chunking", async () => {
    const text = "event: a\ndata: 1\n\nevent: b\ndata: 2\n\n";
    const oneByOne = await events(text.split(""));
    expect(oneByOne).toEqual([
      { event: "a", data: "1" },
      { event: "b", data: "2" },
    ]);
    expect(await events(["data: unterminated\n"])).toEqual([]);
  });

  it("takes a CR that ends the stream as a line ending", async () => {
    expect(await events(["data: last\r\r"])).toEqual([{ event: "message", data: "last" }]);
  });

  it("treats a CRLF split across chunks as one line ending", async () => {
    expect(await events(["data: a\r", "\ndata: b\r\n\r", "\n"])).toEqual([
      { event: "message", data: "a\nb" },
    ]);
  });

  it("decodes a UTF-8 character split across chunks", async () => {
    const bytes = new TextEncoder().encode("data: é€😀\n\n");
    const cut = bytes.indexOf(0xe2) + 1; // inside the three bytes of €
    expect(await events([bytes.slice(0, cut), bytes.slice(cut)])).toEqual([
      { event: "message", data: "é€😀" },
    ]);
  });

  it("stops with an AbortError when its signal aborts", async () => {
    const controller = new AbortController();
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode("data: first\n\n"));
      },
    });
    const seen: string[] = [];
    const reading = (async () => {
      for await (const event of parseSse(stream, controller.signal)) {
        seen.push(event.data);
        controller.abort();
      }
    })();
    await expect(reading).rejects.toMatchObject({ name: "AbortError" });
    expect(seen).toEqual(["first"]);
  });
});
