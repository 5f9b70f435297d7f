/**
 * Configured secret values in model output (src/pipeline/output-redaction.ts, issue #23): a key
 * cut anywhere across text or argument deltas never comes out whole or in pieces that rebuild
 * it; a held tail is released before its part's `*.done` (or the turn's end) so no text is lost;
 * deltas with nothing key-like pass unchanged (the same object); a key learnt at run time (a
 * tenant's own upstream key, `SecretRedactor.add`) is covered from then on; key shapes that are
 * not configured stay as the model wrote them.
 */
import { describe, expect, it } from "vitest";
import { OutputRedaction } from "../../../src/pipeline/output-redaction.ts";
import { REDACTED, SecretRedactor } from "../../../src/secrets/redactor.ts";
import type { UpstreamEvent } from "../../../src/upstream/upstream.ts";

const KEY = "Zq8ty3PLAINalnum7730keyXy";
const OWN = "tenantOwnKey0123456789abcdef";

const part = { item_id: "msg_1", output_index: 0, content_index: 0 };
const delta = (text: string): UpstreamEvent => ({ type: "response.output_text.delta", ...part, delta: text });

/** Runs `events` through one OutputRedaction; returns what comes out. */
function run(redactor: SecretRedactor, events: UpstreamEvent[]): UpstreamEvent[] {
  const output = new OutputRedaction(redactor);
  return events.flatMap((event) => output.events(event));
}

/** The deltas' text, joined. */
function streamed(events: UpstreamEvent[]): string {
  return events.map((e) => (typeof e.delta === "string" ? e.delta : "")).join("");
}

describe("output redaction (configured values)", () => {
  const text = `Your key: ${KEY}! and ${KEY}`;
  const expected = `Your key: ${REDACTED}! and ${REDACTED}`;

  it("redacts a key cut at every position, and char by char, with no text lost", () => {
    const redactor = new SecretRedactor([KEY]);
    const cuts: string[][] = [];
    for (let at = 0; at <= text.length; at++) cuts.push([text.slice(0, at), text.slice(at)]);
    cuts.push([...text]);
    for (const pieces of cuts) {
      const out = run(redactor, [
        ...pieces.map(delta),
        { type: "response.output_text.done", ...part, text },
        { type: "response.completed", response: { output: [{ content: [{ text }] }] } },
      ]);
      expect(streamed(out), JSON.stringify(pieces)).toBe(expected);
      expect(JSON.stringify(out)).not.toContain(KEY.slice(0, 3)); // no piece of it at all
      expect(out.at(-2)).toMatchObject({ type: "response.output_text.done", text: expected });
      expect(out.at(-1)).toEqual({
        type: "response.completed",
        response: { output: [{ content: [{ text: expected }] }] },
      });
    }
  });

  it("holds a tail that could begin a key and releases it, as a delta, before the part's done", () => {
    const out = run(new SecretRedactor([KEY]), [
      delta("ends with Zq8"),
      { type: "response.output_text.done", ...part, text: "ends with Zq8" },
    ]);
    expect(out.map((e) => [e.type, e.delta])).toEqual([
      ["response.output_text.delta", "ends with "],
      ["response.output_text.delta", "Zq8"],
      ["response.output_text.done", undefined],
    ]);
  });

  it("releases what is held before the turn's terminal event when no done came", () => {
    const out = run(new SecretRedactor([KEY]), [delta("Zq8ty"), { type: "response.failed", response: {} }]);
    expect(out.map((e) => e.type)).toEqual([
      "response.output_text.delta",
      "response.output_text.delta",
      "response.failed",
    ]);
    expect(streamed(out)).toBe("Zq8ty");
  });

  it("keeps parts apart: a tail of one part is not completed by another's delta", () => {
    const redactor = new SecretRedactor([KEY]);
    const other = { item_id: "fc_1", output_index: 1 };
    const out = run(redactor, [
      delta(KEY.slice(0, 5)),
      { type: "response.function_call_arguments.delta", ...other, delta: KEY.slice(5) },
      delta(KEY.slice(5)),
    ]);
    expect(out.map((e) => e.delta)).toEqual(["", KEY.slice(5), REDACTED]);
  });

  it("redacts function-call arguments cut across deltas", () => {
    const args = JSON.stringify({ token: KEY });
    const at = args.indexOf(KEY) + 4;
    const fc = { item_id: "fc_1", output_index: 1 };
    const out = run(new SecretRedactor([KEY]), [
      { type: "response.function_call_arguments.delta", ...fc, delta: args.slice(0, at) },
      { type: "response.function_call_arguments.delta", ...fc, delta: args.slice(at) },
      { type: "response.function_call_arguments.done", ...fc, arguments: args },
    ]);
    expect(streamed(out)).toBe(JSON.stringify({ token: REDACTED }));
    expect(out.at(-1)?.arguments).toBe(JSON.stringify({ token: REDACTED }));
  });

  it("passes a delta with nothing key-like unchanged (the same object)", () => {
    const event = delta("plain words, no secret here.");
    expect(run(new SecretRedactor([KEY]), [event])[0]).toBe(event);
  });

  it("covers a key learnt at run time (a tenant's own upstream key)", () => {
    const redactor = new SecretRedactor([KEY]);
    expect(streamed(run(redactor, [delta(`x ${OWN}`)]))).toBe(`x ${OWN}`);
    redactor.add([OWN]);
    expect(streamed(run(redactor, [delta(`x ${OWN.slice(0, 9)}`), delta(`${OWN.slice(9)} y`)]))).toBe(
      `x ${REDACTED} y`,
    );
  });

  it("leaves key shapes that are not configured as the model wrote them", () => {
    const example = "export OPENAI_API_KEY=sk-proj-abc123def456ghi789 # 0123456789abcdef0123456789abcdef";
    const out = run(new SecretRedactor([KEY]), [
      delta(example),
      { type: "response.output_text.done", ...part, text: example },
    ]);
    expect(streamed(out)).toBe(example);
    expect(out.at(-1)?.text).toBe(example);
  });
});
