/**
 * Encrypted reasoning with the Responses upstreams: Deltagate asks for it, marks where it came
 * from, and learns which models refuse it. Owns the `include` value sent upstream, the origin mark
 * on reasoning items, and the per-(upstream, model) memory of refusals.
 * Why: a `store: false` upstream keeps nothing, so a reasoning item can be sent back on a later
 * turn only with its `encrypted_content`, which the upstream returns when asked with
 * `include: ["reasoning.encrypted_content"]` ("This enables reasoning items to be used in
 * multi-turn conversations when using the Responses API statelessly (like when the `store`
 * parameter is set to `false` …)" — https://platform.openai.com/docs/api-reference/responses/create#responses_create-include,
 * https://platform.openai.com/docs/guides/reasoning#encrypted-reasoning-items); the item must
 * then be sent back as it was received (https://github.com/openai/codex/issues/8119:
 * `invalid_encrypted_content` otherwise).
 * - The include is added to every generating request of a Responses adapter (merged with the
 *   client's own `include`), whatever the upstream's `store`: a full-context resend to a storing
 *   upstream (a fork, truncation, a fallback) needs it as much.
 * - A model that does not reason refuses it: 400 `Encrypted content is not supported with this
 *   model.`, `param: "include"` (https://github.com/ShishirPatil/gorilla/issues/1148). Deltagate
 *   cannot tell such models by name (any provider, any alias), so when the include it added is
 *   refused the adapter resends once without it, and once that resend got through, the model is
 *   remembered (per upstream base URL, in this isolate) and not asked again. A client that asked
 *   for the include itself gets the refusal, as from OpenAI.
 * - Encrypted content is the issuing provider's: each reasoning (and compaction) item a Responses
 *   adapter streams carries `ORIGIN_FIELD` = the adapter's base URL, stored with the item and
 *   never shown to the client (src/engine/response-object.ts); item-conversion.ts sends a marked
 *   item only to an upstream with the same base URL. On a compaction item the mark also says it
 *   was a response's output, which starts the context of later turns (src/compaction/).
 */
import { isRecord, type Json } from "../protocol/json.ts";
import { mapEvents } from "./map-events.ts";
import { UpstreamError, type UpstreamEvent, type UpstreamStream } from "./upstream.ts";

/** The `include` value that returns `encrypted_content` on reasoning items. */
export const ENCRYPTED_REASONING = "reasoning.encrypted_content";

/** Field of a stored reasoning item naming the upstream (base URL) that issued it; Deltagate-only. */
export const ORIGIN_FIELD = "deltagate_origin";

/** (base URL, model) pairs remembered at most (oldest forgotten first). */
const MAX_REFUSALS = 256;

/** Models whose upstream refused the include, as `${baseUrl} ${model}`, oldest first. */
const refusals = new Set<string>();

const keyOf = (origin: string, model: string) => `${origin} ${model}`;

/** True when an `include` value (as the client sent it) asks for encrypted reasoning. */
export function asksEncryptedReasoning(include: Json | undefined): boolean {
  return Array.isArray(include) && include.includes(ENCRYPTED_REASONING);
}

/**
 * Whether an adapter adds the include to a request: a generating request (a `generate: false`
 * warm-up produces no reasoning) whose client did not ask for it, to a model not known to refuse it.
 */
export function addsEncryptedInclude(
  origin: string,
  model: string,
  clientInclude: Json | undefined,
  generate: boolean,
): boolean {
  return generate && !asksEncryptedReasoning(clientInclude) && !refusals.has(keyOf(origin, model));
}

/**
 * The `include` to send: the client's, plus `ENCRYPTED_REASONING` when `add`.
 * @returns null when the request should carry the client's value unchanged.
 */
export function upstreamInclude(clientInclude: Json | undefined, add: boolean): Json[] | null {
  if (!add) return null;
  const own = Array.isArray(clientInclude) ? clientInclude : [];
  return [...own, ENCRYPTED_REASONING];
}

/** True for the upstream's refusal of `include` (a model that does not reason). */
export function isIncludeRefusal(cause: unknown): boolean {
  return cause instanceof UpstreamError && cause.status === 400 && cause.param === "include";
}

/** Remembers that `model` at `origin` refuses the include (a resend without it got through). */
export function rememberRefusal(origin: string, model: string): void {
  const key = keyOf(origin, model);
  refusals.delete(key);
  refusals.add(key);
  if (refusals.size > MAX_REFUSALS) refusals.delete(refusals.values().next().value ?? "");
}

/**
 * Item types marked with their origin: reasoning (its encrypted content is the issuer's) and
 * compaction (likewise; the mark also says the item was a response's output, which starts the
 * context window of later turns: src/compaction/compaction-items.ts).
 */
const MARKED_TYPES = new Set(["reasoning", "compaction"]);

function isMarkedType(item: unknown): item is Record<string, Json> {
  return isRecord(item) && typeof item.type === "string" && MARKED_TYPES.has(item.type);
}

function marked(item: Json | undefined, origin: string): Json | undefined {
  return isMarkedType(item) ? { ...item, [ORIGIN_FIELD]: origin } : item;
}

/** `event` with its reasoning and compaction items (`item`, `response.output[]`) marked as issued by `origin`. */
export function markOrigin(event: UpstreamEvent, origin: string): UpstreamEvent {
  let copy = event;
  if (isMarkedType(event.item)) copy = { ...copy, item: marked(event.item, origin) };
  const response = event.response;
  if (isRecord(response) && Array.isArray(response.output)) {
    const output = response.output;
    if (output.some((item) => isMarkedType(item))) {
      copy = {
        ...copy,
        response: { ...response, output: output.map((item) => marked(item, origin) ?? null) },
      };
    }
  }
  return copy;
}

/** `stream` with every event passed through `markOrigin`. */
export function markStreamOrigin(stream: UpstreamStream, origin: string): UpstreamStream {
  return {
    first: markOrigin(stream.first, origin),
    rest: mapEvents(stream.rest, (event) => markOrigin(event, origin)),
  };
}
