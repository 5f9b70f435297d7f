/**
 * Log lines of a session's unexpected failures, and the guard of the entry points the runtime
 * calls with no caller to answer: the hibernation handlers (`webSocketMessage`, `webSocketClose`,
 * `webSocketError`) and the alarm. As partyserver does for its handlers, an exception is caught
 * and logged instead of escaping into the runtime, which would log it without any id.
 * Invariants: every line names the session (its Durable Object id, and the client's session name
 * when known) and the response ids concerned; every line passes the environment's
 * `SecretRedactor` (a cause may quote what a client or an upstream sent), as a whole.
 * Source: https://developers.cloudflare.com/durable-objects/best-practices/websockets/,
 *   https://developers.cloudflare.com/durable-objects/api/alarms/ (a throwing alarm is retried)
 */
import type { SecretRedactor } from "../secrets/redactor.ts";

/** Who a failure concerns. */
export interface FailureIds {
  /** The session Durable Object's id (hex). */
  session: string;
  /** The client's session name (`session-id`), when known. */
  sessionName?: string | undefined;
  /** The responses concerned (running, continued or requested), possibly none. */
  responseIds?: readonly (string | null | undefined)[];
}

/** The ids of a failure as one redacted label, for `asApiError`'s log line (error-rendering.ts). */
export function failureLabel(where: string, ids: FailureIds, redactor: SecretRedactor): string {
  const responses = (ids.responseIds ?? []).filter((id): id is string => typeof id === "string");
  const named = ids.sessionName === undefined ? "" : ` session_name=${JSON.stringify(ids.sessionName)}`;
  return redactor.text(`${where} (session=${ids.session}${named} response_ids=[${responses.join(",")}])`);
}

/** Logs an unexpected failure with its ids, redacted. */
export function logFailure(where: string, ids: FailureIds, cause: unknown, redactor: SecretRedactor): void {
  const detail = cause instanceof Error ? (cause.stack ?? `${cause.name}: ${cause.message}`) : String(cause);
  console.error(failureLabel(where, ids, redactor), redactor.text(detail));
}

/**
 * Runs a handler the runtime called; a failure is logged with `ids()` (read only then), then
 * handed to `onFailure` (which may answer the client, or throw it again: the alarm, which the
 * runtime then retries).
 */
export async function guarded(
  where: string,
  ids: () => FailureIds,
  redactor: SecretRedactor,
  run: () => unknown,
  onFailure: (cause: unknown) => void = () => {},
): Promise<void> {
  try {
    await run();
  } catch (cause) {
    logFailure(where, ids(), cause, redactor);
    onFailure(cause);
  }
}

/** A failure handler that throws the failure again: the alarm's, so the runtime retries it. */
export function rethrow(cause: unknown): never {
  throw cause;
}
