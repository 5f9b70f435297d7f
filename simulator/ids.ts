/**
 * Identifier generation for simulator objects: `resp_…`, `msg_…`, `fc_…`, `call_…`,
 * `chatcmpl-…`, `modr-…`, request ids. Ids are random hex (crypto), so they are unique across
 * connections and restarts, unlike the generated text which is deterministic.
 */
import { randomBytes } from "node:crypto";

/** Returns `prefix` followed by `bytes` random bytes in hex (default 16 bytes → 32 hex chars). */
export function newId(prefix: string, bytes = 16): string {
  return `${prefix}${randomBytes(bytes).toString("hex")}`;
}
