/**
 * JSON helpers for the simulator: the loose object type used for untrusted request bodies,
 * a type guard, canonical (key-sorted) serialization and a stable 32-bit hash over it.
 * Owns nothing else; every other module treats request JSON through these.
 */
import { createHash } from "node:crypto";

/** A parsed JSON object whose fields have not been validated yet. */
export type JsonObject = Record<string, unknown>;

/** True when `value` is a plain JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Serializes `value` with object keys sorted recursively, so equal values give equal strings
 * regardless of key order. `undefined` fields are dropped like JSON.stringify does.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? "null";
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!isJsonObject(value)) return value;
  const out: JsonObject = {};
  for (const key of Object.keys(value).sort()) out[key] = sortKeys(value[key]);
  return out;
}

/** SHA-256 (hex, first 16 chars) of the canonical JSON of `value`; used as a prefix-cache key. */
export function hashJson(value: unknown): string {
  return createHash("sha256").update(canonicalJson(value)).digest("hex").slice(0, 16);
}

/** FNV-1a 32-bit hash of a string; a cheap deterministic seed (not cryptographic). */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
