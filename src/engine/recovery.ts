/**
 * Ends the responses an earlier instance of a session Durable Object left running: when the
 * instance was reset mid-turn (a crash, an eviction, a deploy, a killed local server), the turn is
 * gone but its row is still `in_progress`. Owns what such a response becomes on wake:
 * - `failed`, with error `server_error` "The session was restarted before this response finished.";
 * - its output is what its persisted event log says the client was sent (partial-output.ts), so a
 *   chain continued from it holds what the client saw;
 * - its log (store:true) gets the terminal `response.failed` event, numbered past every number
 *   the lost instance can have sent: the last logged one plus `LOG_BATCH_EVENTS` (turn-emitter.ts:
 *   a response never sends more than a batch past its durable log, because the batch's write is
 *   issued right after its last event and the output gate holds every later event until that
 *   write is durable), plus one. So a client resuming from the last `sequence_number` it holds,
 *   whatever it was sent, gets a terminal event it has not seen, and no number names two
 *   different events; the numbers between the log's end and the terminal event are a gap (events
 *   the restart lost, or that were never sent).
 * Events sent in the last batch before the reset (at most a batch, turn-emitter.ts) may be missing
 * from the log and so from the output. A store:false response keeps no log: it ends with no output.
 * Usage stays null: nothing is left to count what the upstream had been sent. A background
 * response ends so too (its webhook announces `response.failed`: docs/webhooks.md).
 * Invariant: after `recoverInterrupted` no response of the session is `queued` or `in_progress`;
 * it runs on wake, before any turn.
 */
import type { ServerEvent } from "../protocol/server-events.ts";
import type { ConversationStore, ResponseOutcome, ResponseRecord } from "../store/conversation-store.ts";
import { PartialOutput } from "./partial-output.ts";
import { responseObject } from "./response-object.ts";
import { LOG_BATCH_EVENTS } from "./turn-emitter.ts";

/** The error of a response interrupted by a restart. */
export const RESTARTED_ERROR = {
  code: "server_error",
  message: "The session was restarted before this response finished.",
} as const;

/**
 * Ends every interrupted response of the session.
 * @param ended told of each response ended, in the same synchronous step as its commit (a
 *   background response's webhook event, src/session/webhook-deliveries.ts).
 * @returns how many were ended.
 */
export function recoverInterrupted(
  store: ConversationStore,
  now: number,
  ended?: (record: ResponseRecord, outcome: ResponseOutcome) => void,
): number {
  const interrupted = store.interrupted();
  for (const record of interrupted) {
    const log = record.store ? store.eventLogs.read(record.id) : null;
    const output = new PartialOutput();
    for (const event of log ?? []) output.apply(event);
    const outcome: ResponseOutcome = {
      status: "failed",
      output: output.items(),
      usage: null,
      error: { ...RESTARTED_ERROR },
      incompleteDetails: null,
      completedAt: now,
    };
    let terminal: ServerEvent | null = null;
    if (log) {
      const final = { ...record, ...outcome, completedAt: now };
      terminal = {
        type: "response.failed",
        sequence_number: (log.at(-1)?.sequence_number ?? -1) + LOG_BATCH_EVENTS + 1,
        response: responseObject(final, [...outcome.output]),
      };
    }
    store.finish(record.id, outcome, terminal ? [JSON.stringify(terminal)] : null);
    ended?.(record, outcome);
  }
  return interrupted.length;
}
