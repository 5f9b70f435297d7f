/**
 * The deployment's one root secret, `DELTAGATE_SECRET`, and the secret of each purpose derived
 * from it by HKDF-SHA-256 (WebCrypto), one `info` per purpose, so no two purposes share key
 * material and a leaked derived secret does not reveal the root or another purpose's.
 * - the control plane takes the root itself: src/tenancy/control-crypto.ts already derives its own
 *   two keys from it by HKDF (salt `deltagate-control-plane`), exactly as it did from
 *   `CONTROL_SECRET`, so moving that value to `DELTAGATE_SECRET` keeps every minted key and sealed
 *   upstream key working;
 * - client secrets and compaction items get 256 derived bits each (below, salt `deltagate-secret`),
 *   as base64url text: the form their modules take a configured secret in (`CLIENT_SECRET_SIGNING_KEY`,
 *   `COMPACTION_KEY`).
 * Invariants: the derivation is deterministic (every isolate of a deployment derives the same
 * secrets) and memoized per isolate; a derived secret never appears in a `Config` as anything
 * but a promise of its text, and is never logged.
 * Source: https://developer.mozilla.org/en-US/docs/Web/API/SubtleCrypto/deriveBits#hkdf,
 *   https://www.rfc-editor.org/rfc/rfc5869
 */

/** The purposes a root secret is derived for, each with its HKDF `info` (versioned). */
export const DERIVED_PURPOSES = {
  clientSecrets: "client-secret-signing/v1",
  compaction: "compaction-items/v1",
} as const;
/** One of `DERIVED_PURPOSES`. */
export type DerivedPurpose = keyof typeof DERIVED_PURPOSES;

/** Shortest root secret accepted (characters): the 256 bits every key derived from it has. */
export const MIN_ROOT_SECRET_CHARS = 32;

const SALT = "deltagate-secret";
const memo = new Map<string, Promise<string>>();

function base64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

async function derive(root: string, purpose: DerivedPurpose): Promise<string> {
  const encoder = new TextEncoder();
  const base = await crypto.subtle.importKey("raw", encoder.encode(root), "HKDF", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits(
    {
      name: "HKDF",
      hash: "SHA-256",
      salt: encoder.encode(SALT),
      info: encoder.encode(DERIVED_PURPOSES[purpose]),
    },
    base,
    256,
  );
  return base64Url(new Uint8Array(bits));
}

/** The secret of `purpose` derived from `root` (memoized per isolate). */
export function derivedSecret(root: string, purpose: DerivedPurpose): Promise<string> {
  const id = `${purpose}\u0000${root}`;
  let secret = memo.get(id);
  if (!secret) {
    secret = derive(root, purpose);
    memo.set(id, secret);
  }
  return secret;
}
