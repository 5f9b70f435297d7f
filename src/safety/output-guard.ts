/**
 * Output checks while a response streams: generated text and tool-call arguments are checked in
 * windows behind a hold-back buffer, so no flagged span ever leaves Deltagate, on every
 * transport (the stage sits below the engine, which fans events out to WebSocket, SSE and plain
 * HTTP alike). Owns the windows, the hold-back and the release order; which events extend or
 * finish which text is the one output-event grammar's (src/protocol/output-events.ts).
 *
 * - Every text stream (an output_text or refusal part, a summary part, a function call's or custom
 *   tool call's arguments) accumulates its deltas. A window — the held tail plus the new text — is
 *   classified when the classifier is local (every delta), or when `windowChars` new characters or
 *   a sentence end arrived, or the stream ended. One classifier call at a time per response,
 *   batching every stream's ready window (text piling up during a slow call makes the next
 *   window larger, not the call count higher).
 * - Text is released only up to the checked end minus the hold-back: the classifier's own
 *   `holdBack` (the rules classifier holds exactly what could still grow into a match) or
 *   `holdBackChars`. A span no longer than the hold-back is therefore never partly released.
 * - Events carrying whole texts (`output_text.done`, `content_part.done`, `output_item.done`,
 *   the terminal event's `response.output`) are released only when every text in them was
 *   checked; a text never streamed as deltas is checked whole.
 * - Events keep their order; a delta may be split where the hold-back cuts it.
 * - Flagged (when blocking): nothing more is released, the upstream is aborted, the released
 *   items are finished with what was released and the response ends `incomplete` with reason
 *   `content_filter` (released-output.ts). A classifier failure fails the response with
 *   `safety_unavailable` (503), or, failing open, is recorded and ignored.
 */
import { isRecord } from "../protocol/json.ts";
import { DELTA_EVENTS, DONE_EVENTS, streamKey } from "../protocol/output-events.ts";
import { TERMINAL_EVENT_TYPES } from "../protocol/server-events.ts";
import { UpstreamError, type UpstreamEvent } from "../upstream/upstream.ts";
import {
  type Classifier,
  ClassifierUnavailable,
  classifyWithin,
  flaggedCategories,
  mergeVerdicts,
  type Verdict,
} from "./classifier.ts";
import { contentStrings } from "./content.ts";
import { ReleasedOutput } from "./released-output.ts";

/** Settings of one response's output checks. */
export interface OutputGuardOptions {
  classifier: Classifier;
  timeoutMs: number;
  /** New characters that close a window (remote classifiers). */
  windowChars: number;
  /** Characters held back behind the checked text when the classifier has no `holdBack`. */
  holdBackChars: number;
  /** A flag ends the response (else it is only recorded). */
  block: boolean;
  /** A classifier failure is recorded and ignored instead of failing the response. */
  failOpen: boolean;
  /** Called once when the guard stops the response early (flag or failure): abort the upstream. */
  onStop: () => void;
  now?: () => number;
}

/** What the output checks of one response did. */
export interface OutputAccounting {
  /** Windows (texts) classified. */
  windows: number;
  /** Classifier calls. */
  calls: number;
  /** Time in classifier calls, ms. */
  classifierMs: number;
  /** How long the first generated text was held back before its first character went out, ms. */
  firstTextHoldMs: number | null;
}

const SENTENCE_END = /[.!?](?:\s|$)|\n/;

/** One text stream. Offsets are into `text`. */
interface TextStream {
  text: string;
  /** [0, checked) was classified. */
  checked: number;
  /** [0, safe) may be released. */
  safe: number;
  /** No more text will come. */
  final: boolean;
}

/** A held event: a delta (a slice of a stream) or any other event (released when its texts are checked). */
type Entry =
  | { kind: "delta"; event: UpstreamEvent; stream: TextStream; start: number; end: number; split: boolean }
  | { kind: "event"; event: UpstreamEvent; texts: string[] };

/** A window sent to the classifier. */
type Window = { stream: TextStream; to: number; text: string } | { orphan: string; text: string };

/** The output checks of one response. */
export class OutputGuard {
  private readonly options: OutputGuardOptions;
  private readonly now: () => number;
  private readonly streams = new Map<string, TextStream>();
  private readonly queue: Entry[] = [];
  /** Whole texts known to be checked. */
  private readonly verified = new Set<string>();
  private readonly verdicts: Verdict[] = [];
  private readonly released = new ReleasedOutput();
  private inFlight: Promise<void> | null = null;
  private flag: Verdict | null = null;
  private failure: ClassifierUnavailable | null = null;
  private firstTextAt: number | null = null;
  private stopped = false;
  /** A classifier failure ignored because the policy fails open. */
  failedOpen: ClassifierUnavailable | null = null;
  readonly accounting: OutputAccounting = { windows: 0, calls: 0, classifierMs: 0, firstTextHoldMs: null };

  constructor(options: OutputGuardOptions) {
    this.options = options;
    this.now = options.now ?? (() => performance.now());
  }

  /** Merged verdict of every window classified so far. */
  get verdict(): Verdict {
    return mergeVerdicts(this.verdicts);
  }

  /** True when the response was stopped for flagged output. */
  get flagged(): boolean {
    return this.flag !== null;
  }

  /**
   * The checked events of `source`, in order.
   * @throws {UpstreamError} 503 `safety_unavailable` when the classifier fails (failing closed);
   *   whatever `source` throws.
   */
  async *run(source: AsyncIterable<UpstreamEvent>): AsyncGenerator<UpstreamEvent> {
    const iterator = source[Symbol.asyncIterator]();
    let next: Promise<IteratorResult<UpstreamEvent>> | null = iterator.next();
    try {
      while (true) {
        for (const event of this.releasable()) {
          this.released.observe(event);
          yield event;
        }
        if (this.flag || this.failure) {
          if (!next) this.stop(); // the upstream already ended; nothing to abort
          break;
        }
        if (!next && this.queue.length === 0) return;
        this.dispatch();
        const waits: Promise<IteratorResult<UpstreamEvent> | null>[] = [];
        if (next) waits.push(next);
        if (this.inFlight) waits.push(this.inFlight.then(() => null));
        if (waits.length === 0) throw new Error("output checks stalled with events held back");
        const settled = await Promise.race(waits);
        if (settled === null || !next) continue;
        // `settled` came from `next` (a verdict resolves to null).
        if (settled.done) {
          next = null;
          for (const stream of this.streams.values()) this.finish(stream);
        } else {
          this.accept(settled.value);
          next = iterator.next();
        }
      }
    } finally {
      if (next) {
        // Stopped early (a flag, a failure, or the consumer went away): cancel the upstream.
        next.catch(() => {});
        this.stop();
        void iterator.return?.()?.catch(() => {});
      }
    }
    if (this.failure) throw new UpstreamError(503, "safety_unavailable", unavailableMessage(this.failure));
    yield* this.released.closeForContentFilter();
  }

  /** Aborts the upstream, once. */
  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.options.onStop();
  }

  /** Takes one upstream event into the queue. */
  private accept(event: UpstreamEvent): void {
    const delta = DELTA_EVENTS.get(event.type);
    if (delta && typeof event.delta === "string") {
      const stream = this.stream(streamKey(event, delta));
      const start = stream.text.length;
      stream.text += event.delta;
      this.firstTextAt ??= this.now();
      this.queue.push({ kind: "delta", event, stream, start, end: stream.text.length, split: false });
      return;
    }
    const done = DONE_EVENTS.get(event.type);
    if (done) {
      const field = event[done.field];
      const whole = typeof field === "string" ? field : "";
      const stream = this.stream(streamKey(event, done));
      if (whole.startsWith(stream.text)) stream.text = whole; // any tail never streamed is checked too
      this.finish(stream);
      this.queue.push({ kind: "event", event, texts: whole ? [whole] : [] });
      return;
    }
    if (TERMINAL_EVENT_TYPES.has(event.type)) for (const stream of this.streams.values()) this.finish(stream);
    this.queue.push({ kind: "event", event, texts: eventTexts(event) });
  }

  private stream(key: string): TextStream {
    let stream = this.streams.get(key);
    if (!stream) {
      stream = { text: "", checked: 0, safe: 0, final: false };
      this.streams.set(key, stream);
    }
    return stream;
  }

  /** Marks a stream final; a fully checked final stream is released whole. */
  private finish(stream: TextStream): void {
    stream.final = true;
    this.settle(stream);
  }

  /** Moves a stream's release limit after a verdict or its end. */
  private settle(stream: TextStream): void {
    if (stream.final && stream.checked >= stream.text.length) {
      stream.safe = stream.text.length;
      this.verified.add(stream.text);
      return;
    }
    const checkedText = stream.text.slice(0, stream.checked);
    const hold = this.options.classifier.holdBack
      ? this.options.classifier.holdBack(checkedText)
      : this.options.holdBackChars;
    stream.safe = Math.max(stream.safe, stream.checked - Math.min(hold, stream.checked));
  }

  /** Starts a classifier call for every ready window, unless one is running. */
  private dispatch(): void {
    if (this.inFlight || this.flag || this.failure) return;
    const windows: Window[] = [];
    const { classifier, windowChars } = this.options;
    for (const stream of this.streams.values()) {
      const fresh = stream.text.slice(stream.checked);
      if (fresh.length === 0) continue;
      if (classifier.local || stream.final || fresh.length >= windowChars || SENTENCE_END.test(fresh)) {
        windows.push({ stream, to: stream.text.length, text: stream.text.slice(stream.safe) });
      }
    }
    const finalTexts = new Set([...this.streams.values()].filter((s) => s.final).map((s) => s.text));
    const orphans = new Set<string>();
    for (const entry of this.queue) {
      if (entry.kind !== "event") continue;
      for (const text of entry.texts) {
        if (!this.verified.has(text) && !finalTexts.has(text)) orphans.add(text);
      }
    }
    for (const orphan of orphans) windows.push({ orphan, text: orphan });
    if (windows.length === 0) return;
    this.inFlight = this.classify(windows).finally(() => {
      this.inFlight = null;
    });
  }

  /** Classifies `windows` in one call and applies the verdicts. Never rejects. */
  private async classify(windows: Window[]): Promise<void> {
    const { classifier, timeoutMs, block, failOpen } = this.options;
    const started = this.now();
    this.accounting.calls++;
    this.accounting.windows += windows.length;
    let verdicts: Verdict[];
    try {
      verdicts = await classifyWithin(
        classifier,
        windows.map((w) => w.text),
        "output",
        timeoutMs,
      );
    } catch (cause) {
      const failure =
        cause instanceof ClassifierUnavailable ? cause : new ClassifierUnavailable("error", "failed");
      if (failOpen) {
        this.failedOpen ??= failure;
        verdicts = windows.map(() => ({ flagged: false, categories: {}, scores: {} }));
      } else {
        this.failure = failure;
        return;
      }
    } finally {
      this.accounting.classifierMs += this.now() - started;
    }
    this.verdicts.push(...verdicts);
    const flagged = verdicts.filter((v) => v.flagged);
    if (flagged.length > 0 && block) {
      this.flag = mergeVerdicts(flagged);
      return;
    }
    windows.forEach((window) => {
      if ("orphan" in window) {
        this.verified.add(window.orphan);
      } else {
        window.stream.checked = Math.max(window.stream.checked, window.to);
        this.settle(window.stream);
      }
    });
  }

  /** The events at the head of the queue that may go out now. */
  private *releasable(): Generator<UpstreamEvent> {
    while (this.queue.length > 0 && !this.flag && !this.failure) {
      const entry = this.queue[0]!;
      if (entry.kind === "event") {
        if (!entry.texts.every((t) => this.verified.has(t))) return;
        this.queue.shift();
        yield entry.event;
        continue;
      }
      const upTo = Math.min(entry.end, entry.stream.safe);
      if (upTo <= entry.start) return;
      const whole = !entry.split && upTo === entry.end;
      const delta = entry.stream.text.slice(entry.start, upTo);
      entry.start = upTo;
      entry.split = true;
      if (this.firstTextAt !== null && this.accounting.firstTextHoldMs === null) {
        this.accounting.firstTextHoldMs = this.now() - this.firstTextAt;
      }
      yield whole ? entry.event : splitDelta(entry.event, delta);
      if (upTo < entry.end) return;
      this.queue.shift();
    }
  }

  /** The flagged categories, when the response was stopped for flagged output. */
  get flaggedCategories(): string[] {
    return this.flag ? flaggedCategories(this.flag) : [];
  }
}

/** A piece of a delta event (its logprobs no longer line up, so they are dropped). */
function splitDelta(event: UpstreamEvent, delta: string): UpstreamEvent {
  const piece: UpstreamEvent = { ...event, delta };
  if ("logprobs" in piece) piece.logprobs = [];
  return piece;
}

/** The generated texts an event carries whole (an item, a part, the terminal output). */
function eventTexts(event: UpstreamEvent): string[] {
  const texts: string[] = [];
  if (event.item !== undefined) texts.push(...contentStrings(event.item));
  if (event.part !== undefined) texts.push(...contentStrings(event.part));
  const response = event.response;
  if (isRecord(response)) {
    texts.push(...contentStrings(response.output));
  }
  return texts;
}

/** The client-safe message of a classifier failure during output checks. */
function unavailableMessage(failure: ClassifierUnavailable): string {
  return `Output safety checks are unavailable (${failure.message}); the response was stopped.`;
}
