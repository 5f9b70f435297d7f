/**
 * Thought signatures of the simulator's Gemini endpoints. Gemini returns an opaque
 * `thoughtSignature` on the first `functionCall` part of every step (and on the last part of a
 * text answer) and wants it back on the part it came on; Gemini 3 refuses a missing one in the
 * current turn, and any service refuses one that was altered. Here a signature is an HMAC-SHA256
 * (per simulator instance) over the part it was issued on — the call's name and arguments, or the
 * text — in base64 (Gemini's signatures are bytes, base64 in JSON), so moving it to another part
 * or changing the part is refused.
 * Source: https://ai.google.dev/gemini-api/docs/thought-signatures.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { canonicalJson, isJsonObject, type JsonObject } from "../json.ts";

/** What a signature is bound to: a part's call or text. */
function subject(part: JsonObject): string {
  const call = part.functionCall;
  if (isJsonObject(call)) return `call\n${String(call.name)}\n${canonicalJson(call.args ?? {})}`;
  return `text\n${part.thought === true ? "thought" : "answer"}\n${typeof part.text === "string" ? part.text : ""}`;
}

/** Signs and verifies parts for one simulator instance. */
export class ThoughtSigner {
  readonly #secret = randomBytes(32);

  /** The signature of `part` (without its own `thoughtSignature`). */
  sign(part: JsonObject): string {
    return createHmac("sha256", this.#secret).update(subject(part)).digest("base64");
  }

  /** True when `signature` is this instance's signature of `part`. */
  verify(part: JsonObject, signature: string): boolean {
    const x = Buffer.from(this.sign(part));
    const y = Buffer.from(signature);
    return x.length === y.length && timingSafeEqual(x, y);
  }
}
