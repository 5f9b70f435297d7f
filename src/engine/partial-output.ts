/**
 * The output a client has been sent so far, rebuilt from a response's output events. Owns what
 * an interrupted response (failed mid-stream, cancelled, cut by a restart) reports as its
 * `output`: every item the stream finished (`response.output_item.done`) as it was sent, and an
 * item cut mid-stream as far as its deltas went —
 * - a `message` with `status: "incomplete"` (OpenAI's status for a message cut before its end):
 *   its text is what the client read, and it stays in the conversation;
 * - any other item (a call whose arguments were cut, reasoning) with the status its
 *   `response.output_item.added` announced, `in_progress`: it never finished, so it is left out
 *   of the context a continuation sends upstream (src/engine/history-repair.ts).
 * The events are folded by the one output-event grammar (src/protocol/output-events.ts).
 * Invariant: the same events give the same items, whether applied live (turn-stream.ts) or read
 * back from a persisted event log after a restart (recovery.ts); the events themselves are never
 * mutated (they are also the log a client replays).
 * Source: https://platform.openai.com/docs/api-reference/responses-streaming,
 *   https://platform.openai.com/docs/api-reference/responses/object (output item `status`)
 */
import type { StoredItem } from "../protocol/items.ts";
import { type OutputEvent, OutputFold } from "../protocol/output-events.ts";

/** The output of one response, as far as its events went. */
export class PartialOutput {
  private readonly fold = new OutputFold();

  /** Applies one output event (with Deltagate's ids); other events are ignored. */
  apply(event: OutputEvent): void {
    this.fold.apply(event);
  }

  /** The output so far: finished items as sent, unfinished ones cut where their deltas stopped. */
  items(): StoredItem[] {
    const items: StoredItem[] = [];
    for (const slot of this.fold.slots) {
      if (!slot) continue;
      const item = structuredClone(slot.item);
      if (!slot.done) item.status = item.type === "message" ? "incomplete" : "in_progress";
      items.push(item as StoredItem);
    }
    return items;
  }
}
