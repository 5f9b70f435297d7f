/**
 * The control plane's keys, derived from one secret binding, `CONTROL_SECRET` (HKDF-SHA-256, one
 * `info` per purpose, so no key serves two purposes): the HMAC key that signs tenant API keys
 * (api-keys.ts) and the AES-GCM key that encrypts a tenant's own upstream key at rest.
 * Invariants: the secret never leaves this module; a tenant's upstream key is stored only as
 * `v1.<iv>.<ciphertext>` (base64url), bound to its tenant by the AES-GCM additional data, so a
 * ciphertext copied to another tenant does not decrypt.
 * Source: https://developers.cloudflare.com/workers/runtime-apis/web-crypto/
 */

/** The control plane's derived keys. */
export interface ControlKeys {
  signing: CryptoKey;
  encryption: CryptoKey;
}

const cache = new Map<string, Promise<ControlKeys>>();

async function derive(secret: string): Promise<ControlKeys> {
  const base = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), "HKDF", false, [
    "deriveKey",
  ]);
  const params = (info: string) => ({
    name: "HKDF",
    hash: "SHA-256",
    salt: new TextEncoder().encode("deltagate-control-plane"),
    info: new TextEncoder().encode(info),
  });
  const signing = await crypto.subtle.deriveKey(
    params("api-key-tag/v1"),
    base,
    { name: "HMAC", hash: "SHA-256", length: 256 },
    false,
    ["sign"],
  );
  const encryption = await crypto.subtle.deriveKey(
    params("upstream-key-encryption/v1"),
    base,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
  return { signing, encryption };
}

/**
 * The keys derived from `secret` (memoized per isolate), or null when the deployment has no
 * `CONTROL_SECRET` (then only `DELTAGATE_API_KEYS` authenticate and no key can be minted).
 */
export function controlKeys(secret: unknown): Promise<ControlKeys> | null {
  if (typeof secret !== "string" || secret.length < 16) return null;
  let keys = cache.get(secret);
  if (!keys) {
    keys = derive(secret);
    cache.set(secret, keys);
  }
  return keys;
}

function b64(bytes: Uint8Array): string {
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function unb64(text: string): Uint8Array<ArrayBuffer> {
  const raw = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

/** Encrypts a tenant's upstream key for storage. */
export async function sealUpstreamKey(keys: ControlKeys, tenant: string, plaintext: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: new TextEncoder().encode(tenant) },
    keys.encryption,
    new TextEncoder().encode(plaintext),
  );
  return `v1.${b64(iv)}.${b64(new Uint8Array(sealed))}`;
}

/**
 * Decrypts a stored upstream key of `tenant`.
 * @throws {Error} when it is not ours or not this tenant's (never saying more).
 */
export async function openUpstreamKey(keys: ControlKeys, tenant: string, sealed: string): Promise<string> {
  const [version, iv, data] = sealed.split(".");
  if (version !== "v1" || !iv || !data) throw new Error("unreadable sealed upstream key");
  const plain = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: unb64(iv), additionalData: new TextEncoder().encode(tenant) },
    keys.encryption,
    unb64(data),
  );
  return new TextDecoder().decode(plain);
}
