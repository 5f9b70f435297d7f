/**
 * Affinity for stateless conversations (issue #18.1): a `POST /v1/responses` that names no
 * session and no `previous_response_id` goes to a session derived from what stays the same when
 * its client resends the conversation, so the next resend reaches the Durable Object that holds
 * the chain (transparent deltas, src/resend/), its render cache and its warm upstream socket.
 * Owns the affinity key and the bound on a hot key.
 *
 * The key (the session id `aff_<32 hex>`, inside the tenant's namespace of sessions, so tenants
 * never share one): the request's `prompt_cache_key` when it sets one (a client that sets it per
 * conversation, as Codex does, keeps its object even when it rewrites its history); else the hash
 * of the conversation's stable prefix: the model, `instructions`, `tools` and the input items up
 * to and including the first user message (at most `PREFIX_ITEMS`), which a resend repeats.
 *
 * Two conversations with one key (one `prompt_cache_key` for a whole app, or the same
 * instructions, tools and first message) share one session Durable Object: correctness does not
 * depend on the key, only speed. Each resend still continues only a chain whose every item and
 * setting it repeats, and a conversation that lands elsewhere is sent in full, as before.
 *
 * The bound: a session Durable Object runs every turn on one thread, so one hot key must not
 * take all its conversations there. A session refuses an affinity-routed request while
 * `AFFINITY_MAX_RUNNING` responses are running in it (src/session/http-transport.ts); the Worker
 * then sends that request to a fresh random session (full context upstream, no match). So one
 * key never holds more than that many turns at once, and the rest spread like requests without
 * affinity did before.
 */
import type { CreateRequest } from "../protocol/create-request.ts";
import { normalizeInput } from "../protocol/create-request.ts";
import { itemFingerprint } from "../resend/fingerprint.ts";
import { hash128 } from "../util/hash128.ts";

/** Input items of the stable prefix at most (the first user message usually comes first or second). */
export const PREFIX_ITEMS = 4;

/** The affinity session id of a request (`aff_<32 hex>`). */
export function affinitySessionId(request: CreateRequest): string {
  if (request.prompt_cache_key) return `aff_${hash128(`pck\u0000${request.prompt_cache_key}`)}`;
  const input = normalizeInput(request.input);
  const firstUser = input.findIndex((item) => (item as { role?: unknown }).role === "user");
  const count = firstUser < 0 ? Math.min(input.length, PREFIX_ITEMS) : Math.min(firstUser + 1, PREFIX_ITEMS);
  const prefix = JSON.stringify([
    request.model,
    request.instructions ?? null,
    request.tools ?? null,
    // As the resend matcher reads items (src/resend/fingerprint.ts): ids, statuses and the
    // client's serialization (a string input, string content) do not change the key.
    input.slice(0, count).map(itemFingerprint),
  ]);
  return `aff_${hash128(`prefix\u0000${prefix}`)}`;
}
