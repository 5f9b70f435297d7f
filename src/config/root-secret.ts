/**
 * The deployment's one root secret, `DELTAGATE_SECRET`, and the secret of each purpose derived
 * from it by HKDF-SHA-256 (src/crypto/keys.ts `deriveSecret`), one `info` per purpose, so no two
 * purposes share key material and a derived secret reveals neither the root nor another's.
 * - the control plane takes the root itself: src/tenancy/control-crypto.ts already derives its own
 *   two keys from it by HKDF (salt `deltagate-control-plane`), exactly as it did from
 *   `CONTROL_SECRET`, so moving that value to `DELTAGATE_SECRET` keeps every minted key and sealed
 *   upstream key working;
 * - client secrets and compaction items get 256 derived bits each (salt `deltagate-secret`), as
 *   base64url text: the form their modules take a configured secret in (what
 *   `CLIENT_SECRET_SIGNING_KEY` and `COMPACTION_KEY` held).
 * Invariants: the derivation is deterministic (every isolate of a deployment derives the same
 * secrets) and memoized per isolate; a derived secret reaches a `Config` only as a promise of its
 * text, and is never logged.
 * Source: https://www.rfc-editor.org/rfc/rfc5869
 */
import { deriveSecret, perSecret } from "../crypto/keys.ts";

/** The purposes a root secret is derived for, each with its HKDF `info` (versioned). */
export const DERIVED_PURPOSES = {
  clientSecrets: "client-secret-signing/v1",
  compaction: "compaction-items/v1",
} as const;
/** One of `DERIVED_PURPOSES`. */
export type DerivedPurpose = keyof typeof DERIVED_PURPOSES;

/** Shortest root secret accepted (characters): the 256 bits every key derived from it has. */
export const MIN_ROOT_SECRET_CHARS = 32;

/** HKDF's salt for the root secret's purposes (the control plane has its own). */
export const ROOT_SALT = "deltagate-secret";

const derived = Object.fromEntries(
  Object.entries(DERIVED_PURPOSES).map(([purpose, info]) => [
    purpose,
    perSecret((root) => deriveSecret(root, ROOT_SALT, info)),
  ]),
) as Record<DerivedPurpose, (root: string) => Promise<string>>;

/** The secret of `purpose` derived from `root` (memoized per isolate). */
export function derivedSecret(root: string, purpose: DerivedPurpose): Promise<string> {
  return derived[purpose](root);
}
