/**
 * Configured secrets in model output: a hostile or compromised upstream may make the model echo
 * the key it was called with (or any configured key) inside text, reasoning, a tool call's
 * arguments or a stored item. Owns the redaction of configured secret values (by value:
 * `SecretRedactor.scanValues`, src/secrets/redactor.ts) in every event of one turn's stream:
 * - a streamed `*.delta` string is scanned with the tail carried over from the previous delta of
 *   the same part (same event type, `item_id`, `output_index`, `content_index`/`summary_index`),
 *   so a key split across deltas is caught; a tail that could begin a configured value is held
 *   back until the next delta of that part decides, and is released (redacted) as one more delta
 *   right before that part's `*.done`, or before the turn's terminal event;
 * - every other event (`*.done`, `response.output_item.*`, `response.content_part.*`, terminal
 *   events with their `output`) has every string redacted by value.
 * Every `*.delta` with a string `delta` is covered, not only the text streams of the output
 * grammar (src/protocol/output-events.ts `TEXT_STREAMS`): code-interpreter code, MCP arguments and
 * audio transcripts stream that way too; a part is the `*.delta`/`*.done` pair of the same name.
 * Key shapes (`sk-…`) are not redacted in output: a model legitimately writes example keys,
 * hashes and 32-hex ids, and no shape is a secret of this deployment.
 * Invariant: no configured secret value reaches the engine (the client, the event log, the stored
 * output) in one event or across deltas of one part; a delta costs one pass over its characters
 * (one table read each, unless a character begins a configured value) and nothing else.
 * Not covered: a value the model spells out differently (encoded, reversed, interleaved across
 * two parts, split by a character), and audio.
 */
import type { SecretRedactor } from "../secrets/redactor.ts";
import type { UpstreamEvent } from "../upstream/upstream.ts";

/** Deltas of binary data (base64 audio): not scanned. */
const BINARY_DELTAS = new Set(["response.output_audio.delta", "response.audio.delta"]);

/** Terminal events of a turn: everything still held is released before them. */
const TERMINAL = new Set(["response.completed", "response.failed", "response.incomplete", "error"]);

/** A part's held tail and the last delta event of it (the template of the release). */
interface Held {
  tail: string;
  template: UpstreamEvent;
}

/** The key of a streamed part: its event type without `.delta`/`.done`, and its indices. */
function partKey(base: string, event: UpstreamEvent): string {
  return `${base}\u0000${String(event.item_id)}\u0000${String(event.output_index)}\u0000${String(event.content_index ?? event.summary_index)}`;
}

/** The redaction of configured secret values in one turn's events (one instance per stream). */
export class OutputRedaction {
  private readonly held = new Map<string, Held>();
  private readonly redactor: SecretRedactor;

  constructor(redactor: SecretRedactor) {
    this.redactor = redactor;
  }

  /**
   * The events to pass on for `event`: usually one; a held tail's release comes first when
   * `event` ends its part or the turn.
   */
  events(event: UpstreamEvent): UpstreamEvent[] {
    const type = event.type;
    if (typeof event.delta === "string" && type.endsWith(".delta") && !BINARY_DELTAS.has(type)) {
      return [this.delta(event, event.delta)];
    }
    const out: UpstreamEvent[] = [];
    if (this.held.size > 0) {
      if (type.endsWith(".done")) this.release(partKey(type.slice(0, -".done".length), event), out);
      else if (TERMINAL.has(type)) for (const key of [...this.held.keys()]) this.release(key, out);
    }
    out.push(this.redactor.valuesJson(event));
    return out;
  }

  /**
   * `event` with its delta scanned after the part's held tail; a new tail is held. The part's key
   * is built only when something is or gets held (the common delta holds nothing).
   */
  private delta(event: UpstreamEvent, delta: string): UpstreamEvent {
    let key: string | null = null;
    let before: Held | undefined;
    if (this.held.size > 0) {
      key = partKey(event.type.slice(0, -".delta".length), event);
      before = this.held.get(key);
    }
    const scan = this.redactor.scanValues(before ? before.tail + delta : delta);
    if (scan.held !== "") {
      key ??= partKey(event.type.slice(0, -".delta".length), event);
      this.held.set(key, { tail: scan.held, template: event });
    } else if (before && key !== null) {
      this.held.delete(key);
    }
    return scan.text === delta && scan.held === "" ? event : { ...event, delta: scan.text };
  }

  /** Appends the release of `key`'s held tail (if any) to `out`, as one more delta of its part. */
  private release(key: string, out: UpstreamEvent[]): void {
    const held = this.held.get(key);
    if (!held) return;
    this.held.delete(key);
    const release: UpstreamEvent = {
      ...held.template,
      delta: this.redactor.scanValues(held.tail, true).text,
    };
    // Log probabilities belong to the delta they came with, which was already sent.
    if (Array.isArray(release.logprobs)) release.logprobs = [];
    out.push(release);
  }
}
