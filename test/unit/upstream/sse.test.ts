/**
 * The SSE parser against the WHATWG "event stream interpretation" rules, one rule per test.
 * Source: https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
 * The split-independence property over recorded streams lives in sse-splits.test.ts.
 */
import { describe, expect, it } from "vitest";
import { parseSse, type SseEvent } from "../../../src/upstream/sse.ts";

const utf8 = new TextEncoder();

/** A body that delivers exactly these reads. */
function bodyOf(reads: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const read of reads) controller.enqueue(typeof read === "string" ? utf8.encode(read) : read);
      controller.close();
    },
  });
}

async function collect(reads: (string | Uint8Array)[]): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of parseSse(bodyOf(reads))) events.push(event);
  return events;
}

const message = (data: string, event = "message", id = ""): SseEvent => ({ event, data, id });

describe("parseSse", () => {
  it("keeps a CRLF split across reads as one line end (regression: the LF became a blank line)", async () => {
    const events = await collect(['event: a\r\ndata: {"x":\r', "\ndata: 1}\r\n\r\n"]);
    expect(events).toEqual([message('{"x":\n1}', "a")]);
  });

  it("accepts CRLF, lone CR and lone LF line ends, mixed in one stream", async () => {
    const events = await collect(["data: a\r\n\r\ndata: b\r\rdata: c\n\ndata: d\r\n\n"]);
    expect(events.map((e) => e.data)).toEqual(["a", "b", "c", "d"]);
  });

  it("treats CR CR as two line ends even when a read ends between them", async () => {
    expect(await collect(["data: a\r", "\r"])).toEqual([message("a")]);
  });

  it("strips one space after the colon only, and accepts `data:` without a space", async () => {
    const events = await collect(["data:x\n\ndata:  y\n\ndata\n\n"]);
    expect(events.map((e) => e.data)).toEqual(["x", " y", ""]);
  });

  it("joins multi-line data with LF, keeping empty data lines", async () => {
    expect(await collect(["data: a\ndata:\ndata: b\n\n"])).toEqual([message("a\n\nb")]);
  });

  it("ignores comments, unknown fields and field names in another case", async () => {
    const events = await collect([": keepalive\nfoo: bar\nDATA: no\ndata: yes\n:\n\n"]);
    expect(events).toEqual([message("yes")]);
  });

  it("does not dispatch a block without data, and resets its event type", async () => {
    expect(await collect(["event: lost\n\ndata: a\n\n"])).toEqual([message("a")]);
  });

  it("keeps the last event id across events, ignores ids containing NUL", async () => {
    const events = await collect(["id: 7\ndata: a\n\ndata: b\n\nid: x\u0000y\ndata: c\n\nid\ndata: d\n\n"]);
    expect(events.map((e) => e.id)).toEqual(["7", "7", "7", ""]);
  });

  it("reads `retry:` only when it is all ASCII digits, never as an event", async () => {
    expect(await collect(["retry: 10\nretry: 1x\ndata: a\n\n"])).toEqual([message("a")]);
  });

  it("ignores one leading byte order mark, even split across reads", async () => {
    const bom = new Uint8Array([0xef, 0xbb, 0xbf]);
    const events = await collect([bom.subarray(0, 1), bom.subarray(1), "data: a\n\n"]);
    expect(events).toEqual([message("a")]);
  });

  it("decodes a multi-byte character split inside its bytes", async () => {
    const bytes = utf8.encode("data: 日🎉\n\n");
    const reads = Array.from(bytes, (byte) => new Uint8Array([byte]));
    expect(await collect(reads)).toEqual([message("日🎉")]);
  });

  it("discards an event the stream ends before its blank line", async () => {
    expect(await collect(["data: a\n\ndata: b\n"])).toEqual([message("a")]);
  });
});
