/**
 * The control plane's keys, derived from one secret, `Config.controlSecret` (the root secret
 * `DELTAGATE_SECRET`, or the deprecated `CONTROL_SECRET` while set; src/config/), by HKDF-SHA-256
 * with one `info` per purpose (src/crypto/keys.ts): the HMAC key that signs tenant API keys (api-keys.ts)
 * and the AES-GCM key that seals a tenant's own upstream key at rest.
 * Invariants: the secret never leaves this module; a tenant's upstream key is stored only as
 * `v1.<iv>.<ciphertext ‖ tag>` (base64url), bound to its tenant by the AES-GCM additional data
 * (src/crypto/sealing.ts), so a ciphertext copied to another tenant does not open.
 */
import { fromBase64Url, fromUtf8, toBase64Url } from "../crypto/encoding.ts";
import { deriveKey, perSecret } from "../crypto/keys.ts";
import { IV_BYTES, open, seal } from "../crypto/sealing.ts";

/** The control plane's derived keys. */
export interface ControlKeys {
  signing: CryptoKey;
  encryption: CryptoKey;
}

const SALT = "deltagate-control-plane";

const derived = perSecret(
  async (secret): Promise<ControlKeys> => ({
    signing: await deriveKey(secret, SALT, "api-key-tag/v1", "hmac"),
    encryption: await deriveKey(secret, SALT, "upstream-key-encryption/v1", "aes-gcm"),
  }),
);

/**
 * The keys derived from `secret` (memoized per isolate), or null when the deployment has no
 * control secret (then only `DELTAGATE_API_KEYS` authenticate and no key can be minted).
 */
export function controlKeys(secret: unknown): Promise<ControlKeys> | null {
  if (typeof secret !== "string" || secret.length < 16) return null;
  return derived(secret);
}

/** Seals a tenant's upstream key for storage. */
export async function sealUpstreamKey(keys: ControlKeys, tenant: string, plaintext: string): Promise<string> {
  const sealed = await seal(keys.encryption, plaintext, tenant);
  return `v1.${toBase64Url(sealed.subarray(0, IV_BYTES))}.${toBase64Url(sealed.subarray(IV_BYTES))}`;
}

/**
 * Opens a stored upstream key of `tenant`.
 * @throws {Error} when it is not ours or not this tenant's (never saying more).
 */
export async function openUpstreamKey(keys: ControlKeys, tenant: string, sealed: string): Promise<string> {
  const [version, iv, data, extra] = sealed.split(".");
  const ivBytes = fromBase64Url(iv ?? "");
  const dataBytes = fromBase64Url(data ?? "");
  if (version !== "v1" || extra !== undefined || ivBytes?.length !== IV_BYTES || !dataBytes) {
    throw new Error("unreadable sealed upstream key");
  }
  const joined = new Uint8Array(IV_BYTES + dataBytes.length);
  joined.set(ivBytes);
  joined.set(dataBytes, IV_BYTES);
  const plain = await open(keys.encryption, joined, tenant);
  if (!plain) throw new Error("unreadable sealed upstream key");
  return fromUtf8(plain);
}
