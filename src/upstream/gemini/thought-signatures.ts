/**
 * Gemini's thought signatures inside Responses `reasoning` items. Gemini returns an opaque
 * `thoughtSignature` on some parts of a response (the first `functionCall` part of every step,
 * a thought part, the last part of a text answer) and wants each back on the part it came on;
 * Gemini 3 answers 400 when the first function call of a step in the current turn comes back
 * without it. A Responses client has nowhere to keep a signature but `reasoning` items, so the
 * synthesizer (synthesizer.ts) puts one right before the item whose first part was signed, and
 * its `encrypted_content` is a `ThoughtState`: JSON in base64url behind a version prefix, opaque
 * to the client, byte-exact on the way back (JSON of strings round-trips exactly):
 * - `next`: the signature of the first part of the model item that follows the reasoning item
 *   (a `function_call` → its `functionCall` part; an assistant `message` → its text part);
 * - `parts`: signed parts that have no Responses item of their own (a thought part, an empty
 *   text part), sent back verbatim where the reasoning item stands.
 * The session stores the reasoning item with the response (src/store/), so a chained turn, a
 * reconnect and a client that resends everything (transparent deltas) send it back; one that
 * resends it without `encrypted_content` gets it restored by id (src/resend/reasoning-restore.ts).
 * Invariant: `openThoughts(sealThoughts(state))` deep-equals `state`; anything else opens to null
 * (another provider's reasoning is not Gemini's and is left out).
 * Source: https://ai.google.dev/gemini-api/docs/thought-signatures ("you must return this
 * signature in the exact part it was received in"; parallel calls: only the first
 * `functionCall` part is signed; validation of the current turn only).
 */
import { isRecord } from "../../protocol/json.ts";
import { openEnvelope, wrapEnvelope } from "../provider-envelope.ts";
import type { GeminiPart } from "./wire.ts";

/** What one reasoning item carries of a Gemini response. */
export interface ThoughtState {
  /** Signed parts without an item of their own, verbatim, in stream order. */
  parts: GeminiPart[];
  /** The signature of the first part of the following model item, or null. */
  next: string | null;
}

/** Prefix of `encrypted_content` that holds Gemini thought signatures. */
export const THOUGHTS_PREFIX = "gemini-thought.v1.";

/** The `encrypted_content` carrying `state`. */
export function sealThoughts(state: ThoughtState): string {
  const json = state.next === null ? { parts: state.parts } : { parts: state.parts, next: state.next };
  return wrapEnvelope(THOUGHTS_PREFIX, json);
}

/** A part that carries a thought signature, as stored: text (maybe a thought) and the signature. */
function partOf(value: unknown): GeminiPart | null {
  if (!isRecord(value) || typeof value.thoughtSignature !== "string" || typeof value.text !== "string") {
    return null;
  }
  const part: GeminiPart = { text: value.text };
  if (value.thought === true) part.thought = true;
  part.thoughtSignature = value.thoughtSignature;
  return part;
}

/** The state an `encrypted_content` carries, or null when it is not ours. */
export function openThoughts(content: unknown): ThoughtState | null {
  const value = openEnvelope(THOUGHTS_PREFIX, content);
  if (!isRecord(value) || !Array.isArray(value.parts)) return null;
  const next = value.next === undefined ? null : value.next;
  if (next !== null && typeof next !== "string") return null;
  const parts = value.parts.map(partOf);
  if (!parts.every((part) => part !== null)) return null;
  return { parts: parts as GeminiPart[], next };
}
