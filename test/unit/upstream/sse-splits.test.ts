/**
 * Split-independence of the SSE parser (issue #11 item 4): the same bytes give the same events
 * however they are cut into reads. Streams recorded from the reference simulator (a Responses
 * stream and a Chat Completions stream, both carrying CJK, emoji and a ZWJ sequence in function
 * call arguments), each also rewritten with CRLF, lone-CR and mixed line ends, a byte order mark,
 * comments, `id:`/`retry:` fields, `data:` without a space and JSON spread over several `data:`
 * lines. Every variant is cut at every byte offset, into single bytes, and at seeded random
 * multi-cuts (through `parseSse` and a real `ReadableStream`).
 * Source: https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseSse, type SseEvent, SseParser } from "../../../src/upstream/sse.ts";

const fixture = (name: string): string =>
  readFileSync(new URL(`../../fixtures/sse/${name}`, import.meta.url), "utf8");

/** What an event means: its type and its data as JSON (or the `[DONE]` sentinel as is). */
interface Meaning {
  event: string;
  value: unknown;
}

/** The recorded stream's events, read naively (it has LF line ends, one `data:` line each). */
function recordedMeaning(text: string): Meaning[] {
  return text
    .split("\n\n")
    .filter((block) => block !== "")
    .map((block) => {
      let event = "message";
      let data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) event = line.slice(7);
        else if (line.startsWith("data: ")) data = line.slice(6);
        else throw new Error(`unexpected recorded line ${line}`);
      }
      return { event, value: data === "[DONE]" ? data : JSON.parse(data) };
    });
}

function meaningOf(events: SseEvent[]): Meaning[] {
  return events.map((e) => ({ event: e.event, value: e.data === "[DONE]" ? e.data : JSON.parse(e.data) }));
}

/** Joins lines with line ends cycling CRLF, LF, CR, never letting "CR" + "LF" merge into one. */
function mixedLineEnds(lines: string[]): string {
  const ends = ["\r\n", "\n", "\r"];
  let out = "";
  let previous = "";
  lines.forEach((line, i) => {
    let end = ends[i % ends.length] ?? "\n";
    if (previous === "\r" && line === "" && end.startsWith("\n")) end = "\r";
    out += line + end;
    previous = end;
  });
  return out;
}

/** The recorded events re-encoded with every optional feature of the format. */
function decorated(meaning: Meaning[]): string {
  const lines = ["retry: 3000", ": a comment before the first event"];
  meaning.forEach(({ event, value }, i) => {
    if (i % 3 === 0) lines.push(": keepalive");
    lines.push(`id:${i}`);
    if (event !== "message") lines.push(i % 2 === 0 ? `event:${event}` : `event: ${event}`);
    const data = typeof value === "string" ? [value] : JSON.stringify(value, null, 1).split("\n");
    data.forEach((line, j) => {
      lines.push(j % 2 === 0 ? `data:${line}` : `data: ${line}`);
    });
    lines.push("");
  });
  return `\uFEFF${mixedLineEnds(lines)}`;
}

interface Variant {
  name: string;
  bytes: Uint8Array;
  meaning: Meaning[];
}

function variantsOf(stream: string): Variant[] {
  const text = fixture(stream);
  const meaning = recordedMeaning(text);
  const encode = (s: string) => new TextEncoder().encode(s);
  return [
    { name: `${stream} as recorded (LF)`, bytes: encode(text), meaning },
    { name: `${stream} with CRLF`, bytes: encode(text.replaceAll("\n", "\r\n")), meaning },
    { name: `${stream} with lone CR`, bytes: encode(text.replaceAll("\n", "\r")), meaning },
    { name: `${stream} decorated`, bytes: encode(decorated(meaning)), meaning },
  ];
}

/** Parses with the reads cut at `cuts` (ascending byte offsets). */
function parseCut(bytes: Uint8Array, cuts: number[]): SseEvent[] {
  const parser = new SseParser();
  const events: SseEvent[] = [];
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    events.push(...parser.push(bytes.subarray(from, cut)));
    from = cut;
  }
  events.push(...parser.end());
  return events;
}

async function parseReads(bytes: Uint8Array, cuts: number[]): Promise<SseEvent[]> {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      let from = 0;
      for (const cut of [...cuts, bytes.length]) {
        controller.enqueue(bytes.slice(from, cut));
        from = cut;
      }
      controller.close();
    },
  });
  const events: SseEvent[] = [];
  for await (const event of parseSse(body)) events.push(event);
  return events;
}

function sameEvents(a: SseEvent[], b: SseEvent[]): boolean {
  return (
    a.length === b.length &&
    a.every((e, i) => e.event === b[i]?.event && e.data === b[i]?.data && e.id === b[i]?.id)
  );
}

/** mulberry32: a small seeded PRNG, so a failing cut set can be reproduced. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomCuts(random: () => number, length: number): number[] {
  const count = 1 + Math.floor(random() * 40);
  const cuts = new Set<number>();
  for (let i = 0; i < count; i++) cuts.add(Math.floor(random() * (length + 1)));
  return [...cuts].sort((a, b) => a - b);
}

describe.each(["responses.sse", "chat.sse"])("SSE split-independence: %s", (stream) => {
  const variants = variantsOf(stream);

  it("has the recorded content the property is meant to exercise", () => {
    const [recorded] = variants;
    const text = new TextDecoder().decode(recorded?.bytes);
    expect(text).toMatch(/日本/);
    expect(text).toMatch(/🎉/);
    expect(text).toMatch(/👩‍👩‍👧/);
    expect(recorded?.meaning.length).toBeGreaterThan(5);
  });

  it.each(variants.map((v) => [v.name, v] as const))("%s: one read gives the recorded events", (_, v) => {
    expect(meaningOf(parseCut(v.bytes, []))).toEqual(v.meaning);
  });

  it.each(variants.map((v) => [v.name, v] as const))("%s: a cut at every byte offset", (_, v) => {
    const whole = parseCut(v.bytes, []);
    for (let offset = 0; offset <= v.bytes.length; offset++) {
      const events = parseCut(v.bytes, [offset]);
      if (!sameEvents(events, whole)) expect(events, `cut at ${offset}`).toEqual(whole);
    }
  });

  it.each(variants.map((v) => [v.name, v] as const))("%s: one byte per read", (_, v) => {
    const everyByte = Array.from({ length: v.bytes.length }, (_, i) => i + 1);
    expect(parseCut(v.bytes, everyByte)).toEqual(parseCut(v.bytes, []));
  });

  it.each(variants.map((v, i) => [v.name, v, i] as const))(
    "%s: seeded random multi-cuts through parseSse",
    async (_, v, i) => {
      const whole = parseCut(v.bytes, []);
      const random = prng(0x5e5 + i);
      for (let run = 0; run < 50; run++) {
        const cuts = randomCuts(random, v.bytes.length);
        expect(await parseReads(v.bytes, cuts), `cuts ${cuts.join(",")}`).toEqual(whole);
      }
    },
  );
});
