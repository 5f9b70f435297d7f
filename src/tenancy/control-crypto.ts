/**
 * The control plane's keys, derived from one secret, `Config.controlSecret` (the root secret
 * `DELTAGATE_SECRET`, or the deprecated `CONTROL_SECRET` while set; src/config/), by HKDF-SHA-256
 * with one `info` per purpose (src/crypto/keys.ts): the HMAC key that signs tenant API keys (api-keys.ts),
 * the AES-GCM key that seals a tenant's own upstream key at rest, and the AES-GCM key that seals
 * its webhook signing secret at rest (docs/webhooks.md) — a key of its own, so a sealed value of
 * one purpose never opens as the other's.
 * Invariants: the secret never leaves this module; a sealed value is stored only as
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
  /** Seals tenants' webhook signing secrets. */
  webhookSealing: CryptoKey;
}

const SALT = "deltagate-control-plane";

const derived = perSecret(
  async (secret): Promise<ControlKeys> => ({
    signing: await deriveKey(secret, SALT, "api-key-tag/v1", "hmac"),
    encryption: await deriveKey(secret, SALT, "upstream-key-encryption/v1", "aes-gcm"),
    webhookSealing: await deriveKey(secret, SALT, "webhook-secret-encryption/v1", "aes-gcm"),
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
export function sealUpstreamKey(keys: ControlKeys, tenant: string, plaintext: string): Promise<string> {
  return sealFor(keys.encryption, tenant, plaintext);
}

/**
 * Opens a stored upstream key of `tenant`.
 * @throws {Error} when it is not ours or not this tenant's (never saying more).
 */
export function openUpstreamKey(keys: ControlKeys, tenant: string, sealed: string): Promise<string> {
  return openFor(keys.encryption, tenant, sealed);
}

/** Seals a tenant's webhook signing secret for storage. */
export function sealWebhookSecret(keys: ControlKeys, tenant: string, secret: string): Promise<string> {
  return sealFor(keys.webhookSealing, tenant, secret);
}

/**
 * Opens a stored webhook signing secret of `tenant`.
 * @throws {Error} when it is not ours, not this tenant's or not a webhook secret (never saying more).
 */
export function openWebhookSecret(keys: ControlKeys, tenant: string, sealed: string): Promise<string> {
  return openFor(keys.webhookSealing, tenant, sealed);
}

async function sealFor(key: CryptoKey, tenant: string, plaintext: string): Promise<string> {
  const sealed = await seal(key, plaintext, tenant);
  return `v1.${toBase64Url(sealed.subarray(0, IV_BYTES))}.${toBase64Url(sealed.subarray(IV_BYTES))}`;
}

async function openFor(key: CryptoKey, tenant: string, sealed: string): Promise<string> {
  const [version, iv, data, extra] = sealed.split(".");
  const ivBytes = fromBase64Url(iv ?? "");
  const dataBytes = fromBase64Url(data ?? "");
  if (version !== "v1" || extra !== undefined || ivBytes?.length !== IV_BYTES || !dataBytes) {
    throw new Error("unreadable sealed value");
  }
  const joined = new Uint8Array(IV_BYTES + dataBytes.length);
  joined.set(ivBytes);
  joined.set(dataBytes, IV_BYTES);
  const plain = await open(key, joined, tenant);
  if (!plain) throw new Error("unreadable sealed value");
  return fromUtf8(plain);
}
