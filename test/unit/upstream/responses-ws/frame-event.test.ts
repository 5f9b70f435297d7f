/**
 * Upstream WebSocket messages → events (src/upstream/responses-ws/frame-event.ts): binary frames
 * are decoded as whole UTF-8 messages, whatever view of whatever buffer carries them; lifecycle
 * events are recognized without parsing their (large, never read) Response object.
 */
import { describe, expect, it } from "vitest";
import { frameEvent, frameText } from "../../../../src/upstream/responses-ws/frame-event.ts";

const event = { type: "response.output_text.delta", delta: "日本語 🎉👩‍👩‍👧 café", sequence_number: 3 };
const json = JSON.stringify(event);
const bytes = new TextEncoder().encode(json);

describe("frameEvent", () => {
  it("reads a text frame", () => {
    expect(frameEvent(json)).toEqual(event);
  });

  it("reads a binary frame as one UTF-8 message (ArrayBuffer)", () => {
    const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    expect(frameEvent(buffer)).toEqual(event);
  });

  it("reads only the view's own bytes when the frame is a view into a larger buffer", () => {
    const padded = new Uint8Array(bytes.length + 8).fill(0x7b);
    padded.set(bytes, 4);
    expect(frameEvent(padded.subarray(4, 4 + bytes.length))).toEqual(event);
    expect(frameEvent(new DataView(padded.buffer, 4, bytes.length))).toEqual(event);
  });

  it("decodes every multi-byte character wherever it sits in the message", () => {
    // Prefixes of growing length move each multi-byte character across every byte alignment.
    for (let pad = 0; pad < 4; pad++) {
      const shifted = { ...event, pad: "x".repeat(pad) };
      const encoded = new TextEncoder().encode(JSON.stringify(shifted));
      expect(frameEvent(encoded)).toEqual(shifted);
    }
  });

  it("ignores a leading byte order mark", () => {
    const withBom = new Uint8Array([0xef, 0xbb, 0xbf, ...bytes]);
    expect(frameEvent(withBom)).toEqual(event);
  });

  it("rejects invalid UTF-8 (a truncated character) instead of replacing it", () => {
    const cut = bytes.subarray(0, json.indexOf("日") + 1); // "日" is 3 bytes; keep its first
    expect(frameText(cut)).toBeNull();
    const invalid = new Uint8Array([...new TextEncoder().encode('{"type":"x","d":"'), 0xff, 0x22, 0x7d]);
    expect(frameEvent(invalid)).toBeNull();
  });

  it("rejects non-JSON, a value that is not an object with a string type, and a Blob", () => {
    expect(frameEvent("not json")).toBeNull();
    expect(frameEvent('{"delta":"x"}')).toBeNull();
    expect(frameEvent('{"type":1}')).toBeNull();
    expect(frameEvent("null")).toBeNull();
    expect(frameEvent('["type"]')).toBeNull();
    expect(frameEvent('"type"')).toBeNull();
    expect(frameEvent(new Blob([json]))).toBeNull();
  });
});

describe("frameEvent on lifecycle events", () => {
  const response = { id: "resp_up", object: "response", tools: [{ type: "function", name: "f" }] };

  it("returns only the type of response.created / in_progress / queued", () => {
    for (const type of ["response.created", "response.in_progress", "response.queued"]) {
      expect(frameEvent(JSON.stringify({ type, sequence_number: 0, response }))).toEqual({ type });
      expect(frameEvent(new TextEncoder().encode(JSON.stringify({ type, response })))).toEqual({ type });
    }
  });

  it("parses every other event whole, the terminal one included", () => {
    const completed = { type: "response.completed", response: { ...response, status: "completed" } };
    expect(frameEvent(JSON.stringify(completed))).toEqual(completed);
    const created = { type: "response.created" }; // no comma after the type: parsed as usual
    expect(frameEvent(JSON.stringify(created))).toEqual(created);
  });

  it("still rejects a cut frame", () => {
    expect(frameEvent('{"type":"response.created","response":{"id":"x"')).toBeNull();
  });
});
