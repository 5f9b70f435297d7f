/**
 * What a client secret's binding allows a turn (src/auth/client-secret.ts): the one rule, used by
 * the Worker for HTTP turns and by the session Durable Object for WebSocket frames.
 * Owns: a turn may continue only a response of the secret's own session (response ids name their
 * owning Durable Object, src/util/ids.ts, so this needs no lookup), may name only the secret's
 * models, and may be no larger than its `max_request_bytes`.
 * Invariant: a refused turn stores nothing and reaches no upstream; a response of another session
 * is reported exactly as an unknown id (`previous_response_not_found`), so its existence does not leak.
 */

import type { ApiError } from "../protocol/errors.ts";
import { previousResponseNotFound } from "../protocol/errors.ts";
import { responseOwner } from "../util/ids.ts";
import type { SecretBinding } from "./client-secret.ts";
import { modelNotAllowed, requestTooLargeForSecret } from "./errors.ts";

/** True when `responseId` belongs to the Durable Object whose id (hex) is `ownerId`. */
export function ownedBy(responseId: string, ownerId: string): boolean {
  return responseOwner(responseId) === ownerId;
}

/**
 * Why the binding refuses a turn, or null when it allows it.
 * @param ownerId the hex id of the secret's session Durable Object.
 * @param bytes the turn's size in UTF-8 bytes (frame or decompressed body).
 */
export function bindingRefusal(
  binding: Pick<SecretBinding, "models" | "maxRequestBytes">,
  turn: { model: string; previous_response_id?: string | null | undefined },
  bytes: number,
  ownerId: string,
): ApiError | null {
  if (binding.maxRequestBytes !== null && bytes > binding.maxRequestBytes) {
    return requestTooLargeForSecret(binding.maxRequestBytes);
  }
  if (binding.models && !binding.models.includes(turn.model)) return modelNotAllowed(turn.model);
  const parent = turn.previous_response_id;
  if (parent && !ownedBy(parent, ownerId)) return previousResponseNotFound(parent);
  return null;
}
