/**
 * Session selection for WebSocket upgrades and new HTTP chains: the `session_id` / `session-id` /
 * `x-session-id` header (Codex sends `session-id`), else the `?session=` query parameter, else a
 * fresh random id (for `POST /v1/responses`: first the conversation's affinity session,
 * affinity.ts). Owns the session id syntax.
 */
import { invalidRequest } from "../protocol/errors.ts";
import { randomToken } from "../util/ids.ts";

const HEADERS = ["session_id", "session-id", "x-session-id"] as const;
const SESSION_ID = /^[A-Za-z0-9_.:-]{1,200}$/;

/** The error for a session id of the wrong syntax. */
export function invalidSessionId(param = "session_id") {
  return invalidRequest(
    "Invalid session id: use 1-200 letters, digits, '_', '.', ':' or '-'.",
    param,
    "invalid_session_id",
  );
}

/** True when `id` is a valid session id (1–200 of `[A-Za-z0-9_.:-]`). */
export function isValidSessionId(id: string): boolean {
  return SESSION_ID.test(id);
}

/** A fresh random session id. */
export function newSessionId(): string {
  return `sess_${randomToken(16)}`;
}

/**
 * The session id a request names (header, else `?session=`), or null when it names none.
 * @throws {ApiError} 400 `invalid_session_id` when the named id is not 1–200 of `[A-Za-z0-9_.:-]`.
 */
export function namedSessionId(request: Request): string | null {
  let named: string | null = null;
  for (const name of HEADERS) {
    named = request.headers.get(name);
    if (named) break;
  }
  named ??= new URL(request.url).searchParams.get("session");
  if (named === null || named === "") return null;
  if (!SESSION_ID.test(named)) throw invalidSessionId();
  return named;
}

/**
 * The session id for a request.
 * @returns the client's id, or `sess_<random>` when it names none.
 * @throws {ApiError} 400 `invalid_session_id` when the named id is not 1–200 of `[A-Za-z0-9_.:-]`.
 */
export function sessionIdOf(request: Request): string {
  return namedSessionId(request) ?? newSessionId();
}
