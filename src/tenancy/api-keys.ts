/**
 * Tenant API keys minted by the control plane. Owns their format, their signature and their hash.
 * A key is `dgk_<tenant>_<key id>_<secret><tag>`: the tenant it belongs to (so the Worker knows
 * which tenant Durable Object to ask, with no global index), a 12-hex key id, 128 random bits and
 * a 128-bit tag, HMAC-SHA-256 of the rest under a key derived from the control secret
 * (`Config.controlSecret`: `DELTAGATE_SECRET`, or the deprecated `CONTROL_SECRET`; control-crypto.ts).
 * Invariants: the control plane stores only a key's SHA-256 and its display prefix
 * (`dgk_<tenant>_<key id>`), never the key; a key whose tag does not verify was never minted here,
 * so the Worker refuses it locally, in the same constant time as it checks a real one, without a
 * lookup and without remembering it (no negative cache an attacker could fill).
 */
import { toHex } from "../crypto/encoding.ts";
import { sha256 } from "../crypto/keys.ts";
import { safeEqual, sign } from "../crypto/signing.ts";

/** The tenant id syntax (the same as `DELTAGATE_API_KEYS`' tenants). */
export const TENANT_ID = /^[A-Za-z0-9_.-]{1,64}$/;

const KEY_SHAPE = /^dgk_([A-Za-z0-9_.-]{1,64})_([0-9a-f]{12})_([0-9a-f]{32})([0-9a-f]{32})$/;

/** A minted key, split. */
export interface ParsedKey {
  tenant: string;
  keyId: string;
  /** `dgk_<tenant>_<key id>`: what listings show. */
  prefix: string;
  /** Everything the tag signs. */
  signed: string;
  tag: string;
}

/** Splits a presented key of the minted shape, or null (then it may be a `DELTAGATE_API_KEYS` key). */
export function parseKey(key: string): ParsedKey | null {
  const match = KEY_SHAPE.exec(key);
  if (!match) return null;
  const [, tenant = "", keyId = "", secret = "", tag = ""] = match;
  const prefix = `dgk_${tenant}_${keyId}`;
  return { tenant, keyId, prefix, signed: `${prefix}_${secret}`, tag };
}

/** Random bytes as hex. */
export function randomHex(bytes: number): string {
  return toHex(crypto.getRandomValues(new Uint8Array(bytes)));
}

/** The tag: the first 128 bits of the HMAC, as hex. */
async function tagOf(signingKey: CryptoKey, signed: string): Promise<string> {
  return toHex(await sign(signingKey, signed)).slice(0, 32);
}

/** True when `parsed` carries this deployment's tag (constant time in the tag). */
export async function verifyTag(signingKey: CryptoKey, parsed: ParsedKey): Promise<boolean> {
  return safeEqual(await tagOf(signingKey, parsed.signed), parsed.tag);
}

/** Mints a new key of `tenant`: the key (shown once) and what is stored of it. */
export async function mintKey(
  signingKey: CryptoKey,
  tenant: string,
): Promise<{ key: string; keyId: string; prefix: string; hash: string }> {
  const keyId = randomHex(6);
  const prefix = `dgk_${tenant}_${keyId}`;
  const signed = `${prefix}_${randomHex(16)}`;
  const key = `${signed}${await tagOf(signingKey, signed)}`;
  return { key, keyId, prefix, hash: await keyHash(key) };
}

/** The SHA-256 of a key, hex: the only form the control plane keeps. */
export async function keyHash(key: string): Promise<string> {
  return toHex(await sha256(key));
}
