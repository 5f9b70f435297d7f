/**
 * The terminal outcome of a response, from what the upstream reported. Owns the mapping of
 * upstream terminal events and failures to a stored status, output, usage and error, and the
 * HTTP status a non-streaming client gets for a response that did not complete.
 * Invariant: a failed outcome always has an error with a string `code` and `message`.
 */
import type { StoredItem } from "../protocol/items.ts";
import { isRecord, type Json } from "../protocol/json.ts";
import type { ResponseOutcome } from "../store/conversation-store.ts";
import type { UpstreamEvent } from "../upstream/upstream.ts";
import type { OutputRekeyer } from "./rekey.ts";

/** The error fields of a failed response. */
export interface FailureError {
  code: string;
  message: string;
}

/**
 * How a non-streaming HTTP request is answered when its response did not complete: the failure's
 * status and error type (the upstream's own for a failure before its first event, else 500).
 */
export interface FailureStatus {
  status: number;
  type: string;
}

/** The `FailureStatus` of a failure after the response's first output (or a cancellation). */
export const FAILED_MID_STREAM: FailureStatus = { status: 500, type: "server_error" };

/** A failed outcome keeping the output the client was sent before the failure. */
export function failure(output: readonly StoredItem[], at: number, error: FailureError): ResponseOutcome {
  return {
    status: "failed",
    output,
    usage: null,
    error: { ...error },
    incompleteDetails: null,
    completedAt: at,
  };
}

/** The error of an upstream `error` event. */
export function errorOf(event: UpstreamEvent): FailureError {
  return {
    code: typeof event.code === "string" ? event.code : "server_error",
    message: typeof event.message === "string" ? event.message : "The upstream reported an error.",
  };
}

/**
 * The outcome of an upstream terminal event (`response.completed` / `incomplete` / `failed`):
 * the terminal `response.output` re-keyed when the upstream sent it, else the output the client
 * was sent (partial-output.ts).
 * @param seen the output the client was sent; called only when the upstream sent no output (it
 *   copies every item).
 */
export function terminalOutcome(
  event: UpstreamEvent,
  rekey: OutputRekeyer,
  seen: () => readonly StoredItem[],
  at: number,
): ResponseOutcome {
  const response: Record<string, unknown> = isRecord(event.response) ? event.response : {};
  const upstreamOutput = Array.isArray(response.output) ? response.output : null;
  const output = upstreamOutput ? upstreamOutput.map((item, index) => rekey.item(item, index)) : seen();
  const status =
    event.type === "response.completed"
      ? "completed"
      : event.type === "response.incomplete"
        ? "incomplete"
        : "failed";
  return {
    status,
    output,
    usage: (response.usage as Json | undefined) ?? null,
    error:
      status === "failed"
        ? ((response.error as Json | undefined) ?? {
            code: "server_error",
            message: "The upstream response failed.",
          })
        : null,
    incompleteDetails:
      status === "incomplete" ? ((response.incomplete_details as Json | undefined) ?? null) : null,
    completedAt: at,
    moderation: (response.moderation as Json | undefined) ?? null, // set by the safety stage (src/safety/)
  };
}
