/**
 * Deltagate's own `encrypted_content` for a provider whose reasoning state is not an OpenAI blob
 * (Claude's thinking blocks, Gemini's thought signatures): a versioned prefix naming the format,
 * then base64url(JSON). Owns `wrapEnvelope` and `openEnvelope`.
 * Invariant: `openEnvelope` never throws — content that is not this prefix's, or whose payload is
 * not base64url JSON, is null (the caller treats it as another provider's blob). The prefix is the
 * format's version: a change of shape gets a new prefix, and the old one stays readable.
 * Where each provider's state lives: docs/anthropic.md, docs/gemini.md.
 */
import { fromBase64Url, fromUtf8, toBase64Url, utf8 } from "../crypto/encoding.ts";

/** `prefix` + base64url(JSON of `value`). */
export function wrapEnvelope(prefix: string, value: unknown): string {
  return prefix + toBase64Url(utf8(JSON.stringify(value)));
}

/** The JSON value an envelope of `prefix` carries, or null when `content` is not one. */
export function openEnvelope(prefix: string, content: unknown): unknown {
  if (typeof content !== "string" || !content.startsWith(prefix)) return null;
  const bytes = fromBase64Url(content.slice(prefix.length));
  if (!bytes) return null;
  try {
    return JSON.parse(fromUtf8(bytes)); // a fatal decoder or JSON.parse may throw
  } catch {
    return null;
  }
}
