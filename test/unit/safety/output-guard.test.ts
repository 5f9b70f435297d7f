/**
 * Output checks while streaming (src/safety/output-guard.ts) against scripted classifiers: a
 * flagged span never leaves in any released byte — not in a split delta, not in a `.done` event,
 * not in the terminal output — however it is cut into deltas; events keep their order; windows
 * are batched one call at a time; failures fail closed (503 `safety_unavailable`) or open.
 */
import { describe, expect, it } from "vitest";
import { type Classifier, ClassifierUnavailable, type Verdict } from "../../../src/safety/classifier.ts";
import { RulesClassifier } from "../../../src/safety/classifiers/rules.ts";
import { OutputGuard, type OutputGuardOptions } from "../../../src/safety/output-guard.ts";
import { UpstreamError, type UpstreamEvent } from "../../../src/upstream/upstream.ts";

const MARKER = "ZEBRA-MARKER-42";

/** A remote-like classifier flagging texts containing MARKER; records its calls. */
class MarkerClassifier implements Classifier {
  readonly id = "marker";
  readonly model = "marker-model";
  readonly combined = false;
  readonly local: boolean;
  readonly calls: string[][] = [];
  fail: ClassifierUnavailable | null = null;
  constructor(local = false) {
    this.local = local;
  }
  async classify(texts: readonly string[]): Promise<Verdict[]> {
    this.calls.push([...texts]);
    await new Promise((resolve) => setTimeout(resolve, 1));
    if (this.fail) throw this.fail;
    return texts.map((t) => ({
      flagged: t.includes(MARKER),
      categories: { marker: t.includes(MARKER) },
      scores: { marker: t.includes(MARKER) ? 1 : 0 },
    }));
  }
}

/** The Responses events of one message whose text is cut into `size`-character deltas. */
function messageEvents(text: string, size: number): UpstreamEvent[] {
  const id = "msg_up";
  const events: UpstreamEvent[] = [
    { type: "response.created", response: { id: "resp_up", output: [] } },
    {
      type: "response.output_item.added",
      output_index: 0,
      item: { id, type: "message", role: "assistant", status: "in_progress", content: [] },
    },
    {
      type: "response.content_part.added",
      item_id: id,
      output_index: 0,
      content_index: 0,
      part: { type: "output_text", text: "", annotations: [] },
    },
  ];
  for (let i = 0; i < text.length; i += size) {
    events.push({
      type: "response.output_text.delta",
      item_id: id,
      output_index: 0,
      content_index: 0,
      delta: text.slice(i, i + size),
      logprobs: [],
    });
  }
  const item = {
    id,
    type: "message",
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text, annotations: [] }],
  };
  events.push(
    { type: "response.output_text.done", item_id: id, output_index: 0, content_index: 0, text },
    {
      type: "response.content_part.done",
      item_id: id,
      output_index: 0,
      content_index: 0,
      part: item.content[0] ?? null,
    },
    { type: "response.output_item.done", output_index: 0, item },
    { type: "response.completed", response: { id: "resp_up", status: "completed", output: [item] } },
  );
  return events;
}

/** The events of one function call whose arguments are cut into `size`-character deltas. */
function callEvents(args: string, size: number): UpstreamEvent[] {
  const id = "fc_up";
  const item = {
    id,
    type: "function_call",
    call_id: "call_1",
    name: "exec",
    arguments: args,
    status: "completed",
  };
  const events: UpstreamEvent[] = [
    { type: "response.created", response: { id: "resp_up", output: [] } },
    {
      type: "response.output_item.added",
      output_index: 0,
      item: { ...item, arguments: "", status: "in_progress" },
    },
  ];
  for (let i = 0; i < args.length; i += size) {
    events.push({
      type: "response.function_call_arguments.delta",
      item_id: id,
      output_index: 0,
      delta: args.slice(i, i + size),
    });
  }
  events.push(
    { type: "response.function_call_arguments.done", item_id: id, output_index: 0, arguments: args },
    { type: "response.output_item.done", output_index: 0, item },
    { type: "response.completed", response: { id: "resp_up", status: "completed", output: [item] } },
  );
  return events;
}

/**
 * The events of one reasoning item whose `reasoning_text` part is cut into `size`-character deltas
 * (the part announced by `response.content_part.added`, as openai-node's `ReasoningText` part).
 */
function reasoningEvents(text: string, size: number): UpstreamEvent[] {
  const id = "rs_up";
  const events: UpstreamEvent[] = [
    { type: "response.created", response: { id: "resp_up", output: [] } },
    {
      type: "response.output_item.added",
      output_index: 0,
      item: { id, type: "reasoning", summary: [], content: [] },
    },
    {
      type: "response.content_part.added",
      item_id: id,
      output_index: 0,
      content_index: 0,
      part: { type: "reasoning_text", text: "" },
    },
  ];
  for (let i = 0; i < text.length; i += size) {
    events.push({
      type: "response.reasoning_text.delta",
      item_id: id,
      output_index: 0,
      content_index: 0,
      delta: text.slice(i, i + size),
    });
  }
  const item = { id, type: "reasoning", summary: [], content: [{ type: "reasoning_text", text }] };
  events.push(
    { type: "response.reasoning_text.done", item_id: id, output_index: 0, content_index: 0, text },
    {
      type: "response.content_part.done",
      item_id: id,
      output_index: 0,
      content_index: 0,
      part: { type: "reasoning_text", text },
    },
    { type: "response.output_item.done", output_index: 0, item },
    { type: "response.completed", response: { id: "resp_up", status: "completed", output: [item] } },
  );
  return events;
}

async function* paced(events: UpstreamEvent[]): AsyncGenerator<UpstreamEvent> {
  for (const event of events) {
    await new Promise((resolve) => setImmediate(resolve));
    yield event;
  }
}

async function run(
  events: UpstreamEvent[],
  options: Partial<OutputGuardOptions> & { classifier: Classifier },
) {
  let stopped = 0;
  const guard = new OutputGuard({
    timeoutMs: 1_000,
    windowChars: 24,
    holdBackChars: 16,
    block: true,
    failOpen: false,
    onStop: () => stopped++,
    ...options,
  });
  const out: UpstreamEvent[] = [];
  let error: unknown = null;
  try {
    for await (const event of guard.run(paced(events))) out.push(event);
  } catch (cause) {
    error = cause;
  }
  return { out, error, guard, stopped, wire: JSON.stringify(out) };
}

/** Text the client could rebuild from the released deltas. */
const deltaText = (events: UpstreamEvent[]) =>
  events
    .filter((e) => e.type.endsWith(".delta"))
    .map((e) => String(e.delta))
    .join("");

const ANSWER = `The quick brown fox jumps over the lazy dog. Then ${MARKER} appears here, and more text follows after it.`;

describe("output guard", () => {
  it("passes clean output through unchanged, in order, with every character", async () => {
    const text = "All clear. Nothing to see here, just a long enough answer to need several windows.";
    const events = messageEvents(text, 3);
    const { out, error, guard } = await run(events, { classifier: new MarkerClassifier() });
    expect(error).toBeNull();
    expect(deltaText(out)).toBe(text);
    expect(out.filter((e) => !e.type.endsWith(".delta"))).toEqual(
      events.filter((e) => !e.type.endsWith(".delta")),
    );
    expect(out.at(-1)?.type).toBe("response.completed");
    expect(guard.flagged).toBe(false);
  });

  for (const size of [1, 2, 5, 16, 200]) {
    it(`never releases the marker cut into ${size}-character deltas, and ends content_filter`, async () => {
      const { out, wire, guard, stopped } = await run(messageEvents(ANSWER, size), {
        classifier: new MarkerClassifier(),
      });
      expect(wire).not.toContain(MARKER);
      // Not even its start: the 16-character hold-back covers the 15-character marker.
      expect(deltaText(out)).not.toContain("ZEBRA");
      expect(guard.flagged).toBe(true);
      expect(stopped).toBe(1);
      const terminal = out.at(-1)!;
      expect(terminal.type).toBe("response.incomplete");
      expect(terminal.response).toMatchObject({ incomplete_details: { reason: "content_filter" } });
      // The released text is a prefix of the answer, and the closing events carry exactly it.
      const released = deltaText(out);
      expect(ANSWER.startsWith(released)).toBe(true);
      const done = out.find((e) => e.type === "response.output_text.done");
      expect(done?.text).toBe(released);
      const item = out.find((e) => e.type === "response.output_item.done")?.item as Record<string, unknown>;
      expect(item).toMatchObject({
        status: "incomplete",
        content: [{ type: "output_text", text: released }],
      });
    });
  }

  it("a reasoning_text stream cut by the filter is closed with exactly the text the client was sent", async () => {
    const { out, wire, guard } = await run(reasoningEvents(ANSWER, 3), {
      classifier: new MarkerClassifier(),
    });
    expect(guard.flagged).toBe(true);
    expect(wire).not.toContain(MARKER);
    const released = deltaText(out);
    expect(released.length).toBeGreaterThan(0);
    expect(ANSWER.startsWith(released)).toBe(true);
    const closing = out.slice(out.findIndex((e) => e.type === "response.reasoning_text.done"));
    expect(closing.map((e) => e.type)).toEqual([
      "response.reasoning_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.incomplete",
    ]);
    expect(closing[0]).toMatchObject({ output_index: 0, content_index: 0, text: released });
    expect(closing[1]).toMatchObject({ content_index: 0, part: { type: "reasoning_text", text: released } });
    const item = { id: "rs_up", type: "reasoning", status: "incomplete", summary: [] };
    expect(closing[2]?.item).toEqual({ ...item, content: [{ type: "reasoning_text", text: released }] });
    expect(closing[3]?.response).toMatchObject({
      output: [{ ...item, content: [{ type: "reasoning_text", text: released }] }],
      incomplete_details: { reason: "content_filter" },
    });
  });

  it("holds back the marker's start until the window that completes it is checked", async () => {
    // Only the first part of the marker in the first window: the hold-back keeps it back.
    const text = `${"a".repeat(20)}${MARKER}${"b".repeat(40)}`;
    const { wire } = await run(messageEvents(text, 4), { classifier: new MarkerClassifier() });
    expect(wire).not.toContain("ZEBRA");
  });

  it("checks tool-call arguments the same way", async () => {
    const args = JSON.stringify({ cmd: `echo hello && echo ${MARKER} && echo done` });
    const { out, wire } = await run(callEvents(args, 3), { classifier: new MarkerClassifier() });
    expect(wire).not.toContain(MARKER);
    const done = out.find((e) => e.type === "response.output_item.done")?.item as Record<string, unknown>;
    expect(done).toMatchObject({ type: "function_call", status: "incomplete" });
    expect(args.startsWith(String(done.arguments))).toBe(true);
  });

  it("checks a text that arrives only whole (no deltas) before releasing it", async () => {
    const item = {
      id: "msg_x",
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: `x ${MARKER}` }],
    };
    const events: UpstreamEvent[] = [
      { type: "response.created", response: { id: "r" } },
      { type: "response.output_item.done", output_index: 0, item },
      { type: "response.completed", response: { output: [item] } },
    ];
    const { out, wire } = await run(events, { classifier: new MarkerClassifier() });
    expect(wire).not.toContain(MARKER);
    expect(out.at(-1)?.type).toBe("response.incomplete");
  });

  it("sends one call at a time; windows wait for a window's worth of text or a sentence end", async () => {
    const classifier = new MarkerClassifier();
    const text = "word ".repeat(40);
    await run(messageEvents(text, 2), { classifier, windowChars: 50 });
    for (const call of classifier.calls.slice(0, -1)) {
      // every call but the last (the stream's end) covers at least a window of new text
      expect(call.join("").length).toBeGreaterThanOrEqual(50);
    }
    expect(classifier.calls.length).toBeLessThan(text.length / 50 + 3);
  });

  it("checks every delta at once with a local classifier and holds back only a pending word", async () => {
    const rules = new RulesClassifier();
    const text = "Fine words here. ".repeat(6);
    const { out } = await run(messageEvents(text, 8), { classifier: rules });
    expect(deltaText(out)).toBe(text);
    expect(out.filter((e) => e.type === "response.output_text.delta").length).toBeGreaterThan(6);
  });

  it("the local rules classifier stops a streamed API key before any of it goes out", async () => {
    const key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123";
    const { wire, guard } = await run(messageEvents(`Here is the key: ${key} done.`, 3), {
      classifier: new RulesClassifier(),
    });
    expect(guard.flagged).toBe(true);
    expect(wire).not.toContain("sk-proj");
  });

  it("fails the response with 503 safety_unavailable when the classifier fails (closed)", async () => {
    const classifier = new MarkerClassifier();
    classifier.fail = new ClassifierUnavailable("timeout", "no answer in 5 ms");
    const { out, error, stopped } = await run(messageEvents("Some text that needs checking.", 4), {
      classifier,
    });
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ status: 503, code: "safety_unavailable" });
    expect(deltaText(out)).toBe("");
    expect(stopped).toBe(1);
  });

  it("lets the output through and records the failure when failing open", async () => {
    const classifier = new MarkerClassifier();
    classifier.fail = new ClassifierUnavailable("unparseable", "garbage");
    const text = "Some text that needs checking.";
    const { out, error, guard } = await run(messageEvents(text, 4), { classifier, failOpen: true });
    expect(error).toBeNull();
    expect(deltaText(out)).toBe(text);
    expect(guard.failedOpen?.reason).toBe("unparseable");
  });

  it("only records a flag when not blocking (moderation score mode)", async () => {
    const { out, guard } = await run(messageEvents(ANSWER, 5), {
      classifier: new MarkerClassifier(),
      block: false,
    });
    expect(deltaText(out)).toBe(ANSWER);
    expect(guard.flagged).toBe(false);
    expect(guard.verdict.flagged).toBe(true);
  });
});
